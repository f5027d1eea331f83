//! Every function at the CPU its memory size buys on Lambda, and each one's
//! size chosen by measured cost. Each execution environment runs inside a CPU
//! quota (`crate::cpu`) for 128, 256, 512, 1,024 and 1,769 MB, at the
//! kernel's default period and a short one, over TLS as deployed: cold starts
//! with init under the quota and at a whole core, then warm invocations. The
//! floors and Python + boto3 run under the same quotas in the same run.
//!
//! By concern: `scenarios` (each function's repeatable success path),
//! `choice` (cost and the choice, pure), `render` (the report's section and
//! charts). The figures go to bench-report/tuning.json; committed as
//! tools/bench/tuning.json, a test holds the catalog's sizes to them.

pub(crate) mod choice;
mod render;
pub(crate) mod scenarios;

use serde::{Deserialize, Serialize};
use user_service::Store;
use user_service::catalog::FUNCTIONS;

use crate::cpu::{Controller, Cpu, FULL_CORE_MB, Init, Period, SIZES, Share};
use crate::plan::Plan;
use crate::programs::{FLOOR_HELLO, FLOOR_SDK, GET_PROFILE_AT_INIT, PYTHON, check_answer, profile_event};
use crate::proxy::{Proxy, Tls};
use crate::runtime::{Environment, Launch};
use crate::stats::{Sample, millis};
use crate::user::ADA;
use choice::{Cold, Point, Warm};
pub(crate) use render::render;
use scenarios::World;

/// The committed figures the catalog's sizes are chosen from.
pub(crate) const COMMITTED: &str = include_str!("../../tuning.json");

/// What a run measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Tuning {
    /// When and where: figures of a CPU quota on this machine, not of Lambda.
    pub(crate) date: String,
    pub(crate) machine: String,
    pub(crate) spawns: usize,
    pub(crate) warm: usize,
    pub(crate) points: Vec<Point>,
    /// What could not be measured, and why (no writable `cpu` controller).
    pub(crate) unmeasured: Option<String>,
}

impl Tuning {
    pub(crate) fn committed() -> Result<Self, String> {
        serde_json::from_str(COMMITTED).map_err(|e| format!("tools/bench/tuning.json: {e}"))
    }

    pub(crate) fn of(&self, program: &str) -> Vec<&Point> {
        self.points.iter().filter(|p| p.program == program).collect()
    }
}

/// Cold starts per program, size, period and init; warm invocations per
/// program, size and period. Every function at ten shares takes the run
/// about half an hour here: more would buy little, as the choice rests on
/// the worse of four cold figures and two warm ones.
fn counts(plan: &Plan) -> (usize, usize) {
    if plan.smoke { (2, 5) } else { (6, 50) }
}

/// The section: every program at every size and period.
pub(crate) async fn measure(plan: &Plan, store: &Store, secure: &Proxy, tls: &Tls) -> Tuning {
    let (spawns, warm) = counts(plan);
    let controller = Controller::get();
    let mut unmeasured = None;
    let (sizes, periods): (Vec<u32>, Vec<Period>) = match (&controller, plan.smoke) {
        (Err(why), _) => {
            unmeasured = Some(format!(
                "{why}: nothing was measured at 128, 256, 512 or 1,024 MB; 1,769 MB (a whole core) ran unthrottled"
            ));
            (vec![FULL_CORE_MB], vec![Period::Default])
        }
        // The smoke: one function at one throttled size.
        (Ok(_), true) => (vec![128], vec![Period::Default]),
        (Ok(_), false) => (SIZES.to_vec(), Period::ALL.to_vec()),
    };
    if let Some(why) = &unmeasured {
        println!("bench: tuning: {why}");
    }
    let table = store.config().table_name.clone();
    let world = World::new(store).await;
    let ca = Some(tls.ca_file.as_path());
    let mut programs: Vec<String> = if plan.smoke {
        vec!["get-profile".to_owned()]
    } else {
        let mut p: Vec<String> = [FLOOR_HELLO, FLOOR_SDK, PYTHON]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        p.extend(FUNCTIONS.iter().map(|f| f.name.to_owned()));
        // Whether opening the connection during init pays at a share.
        p.push(GET_PROFILE_AT_INIT.to_owned());
        p
    };
    if let Some(only) = std::env::var("BENCH_TUNING_ONLY").ok().filter(|s| !s.is_empty()) {
        programs.retain(|p| only.split(',').any(|o| o == p));
    }
    let mut points = Vec::new();
    for program in &programs {
        let launch = match program.as_str() {
            PYTHON => plan.python(&table, &secure.url, ca),
            FLOOR_HELLO | FLOOR_SDK => plan.launch(program, &table, &secure.url, ca),
            GET_PROFILE_AT_INIT => {
                let mut launch = world
                    .env("get-profile")
                    .into_iter()
                    .fold(plan.launch("get-profile", &table, &secure.url, ca), |l, (k, v)| {
                        l.env(&k, v)
                    });
                launch.label = GET_PROFILE_AT_INIT.to_owned();
                launch.env(user_service::config::DYNAMODB_CONNECT_AT_INIT.name(), "true")
            }
            name => world
                .env(name)
                .into_iter()
                .fold(plan.launch(name, &table, &secure.url, ca), |l, (k, v)| l.env(&k, v)),
        };
        for &mb in &sizes {
            for &period in &periods {
                // A whole core's quota is its period: one period says it all.
                if mb >= FULL_CORE_MB && period != Period::Default {
                    continue;
                }
                let share = Share::of(mb, period);
                let cpu = |init| controller.is_ok().then_some(Cpu { share, init });
                let subject = Subject {
                    program,
                    launch: &launch,
                    world: &world,
                };
                // Python's cold start takes seconds at the small sizes.
                let spawns = if program == PYTHON { spawns.min(4) } else { spawns };
                let cold_throttled = subject.cold(cpu(Init::Throttled), spawns).await;
                let cold_whole_core = subject.cold(cpu(Init::WholeCore), spawns).await;
                let (warm, stat) = subject.warm(cpu(Init::WholeCore), warm).await;
                let point = Point {
                    program: program.clone(),
                    mb,
                    period_ms: share.period_us as f64 / 1000.0,
                    quota_ms: if controller.is_ok() {
                        share.quota_us as f64 / 1000.0
                    } else {
                        share.period_us as f64 / 1000.0
                    },
                    cold_throttled,
                    cold_whole_core,
                    warm,
                    throttled_periods: stat.throttled,
                    periods: stat.periods,
                };
                println!(
                    "bench: tuning {program} {mb} MB, {}: cold {:.0}/{:.0} ms (init throttled/whole core, p99), warm p50 {:.1} p99 {:.1} ms, throttled in {} of {} periods",
                    period.label(),
                    point.cold_throttled.total_p99,
                    point.cold_whole_core.total_p99,
                    point.warm.p50,
                    point.warm.p99,
                    point.throttled_periods,
                    point.periods,
                );
                points.push(point);
            }
        }
    }
    Tuning {
        date: user_service::domain::Timestamp::now()
            .to_string()
            .chars()
            .take(10)
            .collect(),
        machine: crate::machine::machine(),
        spawns,
        warm,
        points,
        unmeasured,
    }
}

/// One program, launched, with the events it is given.
struct Subject<'a> {
    program: &'a str,
    launch: &'a Launch,
    world: &'a World,
}

impl Subject<'_> {
    async fn event(&self) -> serde_json::Value {
        match self.program {
            FLOOR_HELLO | FLOOR_SDK | PYTHON => profile_event(self.program, ADA),
            GET_PROFILE_AT_INIT => self.world.event("get-profile").await,
            name => self.world.event(name).await,
        }
    }

    fn check(&self, answer: &serde_json::Value) {
        let checked = match self.program {
            FLOOR_HELLO | FLOOR_SDK | PYTHON => check_answer(self.program, answer),
            GET_PROFILE_AT_INIT => self.world.check("get-profile", answer),
            name => self.world.check(name, answer),
        };
        if let Err(e) = checked {
            panic!("bench: tuning {}: {e}", self.program);
        }
    }

    fn launch(&self, cpu: Option<Cpu>) -> Launch {
        match cpu {
            Some(cpu) => self.launch.clone().at(cpu),
            None => self.launch.clone(),
        }
    }

    /// `spawns` fresh environments, one invocation each.
    async fn cold(&self, cpu: Option<Cpu>, spawns: usize) -> Cold {
        let launch = self.launch(cpu);
        let (mut init, mut first, mut total, mut billed) = (Vec::new(), Vec::new(), Vec::new(), 0.0);
        for _ in 0..spawns {
            let event = self.event().await;
            let env = Environment::start(&launch).await.unwrap();
            let (took, answer) = env.invoke(&event).await.unwrap();
            self.check(&answer);
            // Lambda bills a custom runtime's init with its first invocation.
            billed += millis(env.init + took).ceil();
            init.push(env.init);
            first.push(took);
            total.push(env.init + took);
            env.terminate().await;
        }
        let (init, first, total) = (Sample::new(init), Sample::new(first), Sample::new(total));
        Cold {
            init_p50: millis(init.p50()),
            first_p50: millis(first.p50()),
            total_p50: millis(total.p50()),
            total_p99: millis(total.pct(0.99)),
            billed_mean: billed / spawns.max(1) as f64,
        }
    }

    /// One environment: an untimed first invocation, then `rounds` timed.
    async fn warm(&self, cpu: Option<Cpu>, rounds: usize) -> (Warm, crate::cpu::Stat) {
        let env = Environment::start(&self.launch(cpu)).await.unwrap();
        let event = self.event().await;
        let (_, answer) = env.invoke(&event).await.unwrap();
        self.check(&answer);
        let before = env.cpu_stat().unwrap_or_default();
        let mut times = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let event = self.event().await;
            let (took, answer) = env.invoke(&event).await.unwrap();
            self.check(&answer);
            times.push(took);
        }
        let after = env.cpu_stat().unwrap_or_default();
        env.terminate().await;
        let billed = times.iter().map(|t| millis(*t).ceil()).sum::<f64>() / times.len().max(1) as f64;
        let sample = Sample::new(times);
        (
            Warm {
                p50: millis(sample.p50()),
                p99: millis(sample.pct(0.99)),
                billed_mean: billed,
            },
            crate::cpu::Stat {
                periods: after.periods.saturating_sub(before.periods),
                throttled: after.throttled.saturating_sub(before.throttled),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The catalog's sizes are what the committed figures choose: a
    /// re-measurement that changes a choice fails here until the catalog follows.
    #[test]
    fn the_catalogs_memory_is_what_the_committed_figures_choose() {
        let tuning = Tuning::committed().unwrap();
        assert!(
            tuning.unmeasured.is_none(),
            "tools/bench/tuning.json was measured without a CPU quota: {:?}",
            tuning.unmeasured
        );
        let rates = crate::cost::lambda_rates().unwrap();
        let choices = render::choices(&tuning, &rates);
        for f in FUNCTIONS {
            let Some((_, _, choice)) = choices.iter().find(|(c, _, _)| c.name == f.name) else {
                // Not measured yet (a function just added): the default size
                // until `make tuning` measures it.
                assert_eq!(
                    f.memory_mb,
                    user_service::catalog::UNMEASURED_MEMORY_MB.max(f.memory_floor_mb),
                    "{}: not in tools/bench/tuning.json, so it takes the default until `make tuning` measures it",
                    f.name
                );
                continue;
            };
            assert_eq!(
                f.memory_mb, choice.mb,
                "{}: the catalog gives {} MB, the committed figures choose {} MB ({})",
                f.name, f.memory_mb, choice.mb, choice.why
            );
            assert!(choice.meets, "{}: {}", f.name, choice.why);
        }
    }
}
