//! `GET /api/campaigns/{id}/bottleneck`: the document `backlab run --json` prints.

use serde::Serialize;
use utoipa::ToSchema;

use crate::analysis::SaidVerdict;
use crate::analysis::bill::{RunBill, SheetBill};
use crate::analysis::life_forecast::LifeForecast;
use crate::analysis::points::Point;
use crate::engine::result::RunResult;
use crate::engine::survey::Survey;
use crate::spec::CampaignSpec;
use crate::views::report::CampaignReport;

/// A campaign's results as one document: its runs, its points and the bottleneck verdict.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Bottleneck)]
pub struct BottleneckBody<'a> {
    pub campaign: BottleneckCampaign<'a>,
    /// Every finished run's result, in the campaign's order.
    pub runs: &'a [RunResult],
    /// Each test at each parameter set: the figures the verdict and every view rest on.
    pub points: &'a [Point],
    /// Which component limits the backup, with the table it rests on and its sentences.
    pub bottleneck: SaidVerdict,
    /// The source's size and whether it shares a device with the target, when surveyed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub survey: Option<&'a Survey>,
    /// Each tool's forecast to the user's size, from the lives on its ladder (a campaign
    /// with a `forecast`): every answer with its range, its words and its basis.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub forecasts: &'a [LifeForecast],
    /// What each run's use of a bucket would cost by each price sheet, cheapest first: its
    /// requests by class, a month of what it stored, a full restore's egress and retrieval,
    /// each naming its sheet and the sheet's date.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub bills: &'a [RunBill],
    /// The campaign's bill by each price sheet, cheapest first: its runs' bills added up.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub campaign_bills: &'a [SheetBill],
}

/// The campaign a bottleneck document belongs to.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = BottleneckCampaign)]
pub struct BottleneckCampaign<'a> {
    pub name: &'a str,
    pub spec: &'a CampaignSpec,
}

impl<'a> From<&'a CampaignReport> for BottleneckBody<'a> {
    fn from(report: &'a CampaignReport) -> Self {
        Self {
            campaign: BottleneckCampaign {
                name: &report.campaign.name,
                spec: &report.campaign.spec,
            },
            runs: &report.runs,
            points: &report.points,
            bottleneck: SaidVerdict::from(&report.bottleneck),
            survey: report.survey.as_ref(),
            forecasts: &report.forecasts,
            bills: &report.bills,
            campaign_bills: &report.campaign_bills,
        }
    }
}
