//! Lambda's CPU share on this machine. Lambda gives a function CPU in
//! proportion to its memory, one vCPU at 1,769 MB; here a process gets the
//! same share from a CPU quota of the kernel's bandwidth control: a cgroup
//! whose quota is `period × MB / 1,769` of each period (cgroup v1's
//! `cpu.cfs_quota_us` and `cpu.cfs_period_us`, or v2's `cpu.max`).
//!
//! The period matters: bandwidth control lets a burst shorter than one
//! period's quota run at full speed, and Lambda does not document its period.
//! So a share is measured at the kernel's default (100 ms) and a short one
//! (10 ms).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Lambda's memory size that buys one whole vCPU.
pub(crate) const FULL_CORE_MB: u32 = 1_769;

/// The memory sizes every function is measured at.
pub(crate) const SIZES: [u32; 5] = [128, 256, 512, 1_024, FULL_CORE_MB];

/// The kernel's smallest quota (both cgroup versions): 1 ms a period.
const MIN_QUOTA_US: u64 = 1_000;

/// The length of the quota's period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Period {
    /// The kernel's default, 100 ms.
    Default,
    /// 10 ms: short bursts no longer run free.
    Short,
}

impl Period {
    pub(crate) const ALL: [Self; 2] = [Self::Default, Self::Short];

    pub(crate) const fn micros(self) -> u64 {
        match self {
            Self::Default => 100_000,
            Self::Short => 10_000,
        }
    }

    pub(crate) const fn label(self) -> &'static str {
        match self {
            Self::Default => "100 ms period",
            Self::Short => "10 ms period",
        }
    }
}

/// The CPU a memory size buys: a quota of each period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Share {
    pub(crate) mb: u32,
    pub(crate) period_us: u64,
    pub(crate) quota_us: u64,
}

impl Share {
    /// `period × MB / 1,769`, capped at one core. Where that falls below the
    /// kernel's 1 ms (128 MB at a 10 ms period: 0.72 ms), the period
    /// stretches to the shortest that holds a 1 ms quota, so the share stays
    /// exact (128 MB: 1 ms of every 13.8 ms).
    pub(crate) fn of(mb: u32, period: Period) -> Self {
        let period_us = period.micros();
        let quota_us = (period_us * u64::from(mb) / u64::from(FULL_CORE_MB)).min(period_us);
        if quota_us >= MIN_QUOTA_US {
            return Self {
                mb,
                period_us,
                quota_us,
            };
        }
        Self {
            mb,
            period_us: (MIN_QUOTA_US * u64::from(FULL_CORE_MB)).div_ceil(u64::from(mb)),
            quota_us: MIN_QUOTA_US,
        }
    }

    /// The share of one core, 0..=1.
    #[cfg(test)]
    fn fraction(&self) -> f64 {
        self.quota_us as f64 / self.period_us as f64
    }
}

/// Whether init runs under the quota too. AWS documents nothing of the CPU
/// during init; community measurements report it unthrottled. Both are
/// measured, and defaults come from the worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Init {
    /// The process enters the group before its program starts.
    Throttled,
    /// The process runs its init at a whole core and enters the group at its
    /// first request for an event.
    WholeCore,
}

#[cfg(test)]
impl Init {
    pub(crate) const ALL: [Self; 2] = [Self::Throttled, Self::WholeCore];
}

/// A share and when it starts to apply, for one execution environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cpu {
    pub(crate) share: Share,
    pub(crate) init: Init,
}

/// Which cgroup version holds the `cpu` controller, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Controller {
    /// cgroup v1: the hierarchy the `cpu` controller is mounted on.
    V1(PathBuf),
    /// cgroup v2: the unified hierarchy, with `cpu` among its controllers.
    V2(PathBuf),
}

/// What the kernel counted in a group: periods, and those it was throttled in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) periods: u64,
    pub(crate) throttled: u64,
}

impl Controller {
    /// The machine's writable `cpu` controller, found once; else why there is none.
    pub(crate) fn get() -> Result<&'static Self, String> {
        static FOUND: OnceLock<Result<Controller, String>> = OnceLock::new();
        FOUND
            .get_or_init(|| {
                let mounts =
                    std::fs::read_to_string("/proc/self/mounts").map_err(|e| format!("/proc/self/mounts: {e}"))?;
                let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
                let found = Self::find(&mounts, &own)?;
                found.prepare()?;
                Ok(found)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The controller in `mounts` (/proc/self/mounts), under this process's own
    /// group (`own`, /proc/self/cgroup), so a container's view works too.
    fn find(mounts: &str, own: &str) -> Result<Self, String> {
        let own_path = |hierarchy: &dyn Fn(&str) -> bool| {
            own.lines()
                .filter_map(|l| {
                    let mut parts = l.splitn(3, ':');
                    Some((parts.next()?, parts.next()?, parts.next()?))
                })
                .find(|(_, controllers, _)| hierarchy(controllers))
                .map(|(_, _, path)| path.trim_start_matches('/').to_owned())
                .unwrap_or_default()
        };
        let mut v2 = None;
        for line in mounts.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [_, target, fstype, options, ..] = fields[..] else {
                continue;
            };
            match fstype {
                "cgroup" if options.split(',').any(|o| o == "cpu") => {
                    let path = own_path(&|c| c.split(',').any(|c| c == "cpu"));
                    return Ok(Self::V1(Path::new(target).join(path)));
                }
                "cgroup2" => {
                    let root = Path::new(target).join(own_path(&str::is_empty));
                    let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
                    if controllers.split_whitespace().any(|c| c == "cpu") {
                        v2 = Some(Self::V2(root));
                    }
                }
                _ => {}
            }
        }
        v2.ok_or_else(|| {
            "no cgroup `cpu` controller: neither a v1 hierarchy with `cpu` nor a v2 one with `cpu` in cgroup.controllers is mounted (see `mount | grep cgroup`)".to_owned()
        })
    }

    /// The bench's own group, under which each environment gets one: made
    /// (proving the hierarchy writable), and emptied of groups an earlier run
    /// left behind.
    fn base(&self) -> PathBuf {
        match self {
            Self::V1(root) | Self::V2(root) => root.join("user-service-bench"),
        }
    }

    fn prepare(&self) -> Result<(), String> {
        let base = self.base();
        std::fs::create_dir_all(&base).map_err(|e| {
            format!(
                "cannot make a cgroup at {} ({e}): the `cpu` controller is not writable here",
                base.display()
            )
        })?;
        if let Self::V2(root) = self {
            // v2 hands a controller down one level at a time.
            for dir in [root.as_path(), base.as_path()] {
                std::fs::write(dir.join("cgroup.subtree_control"), "+cpu")
                    .map_err(|e| format!("cannot enable `cpu` in {}: {e}", dir.display()))?;
            }
        }
        for entry in std::fs::read_dir(&base).map_err(|e| e.to_string())?.flatten() {
            if entry.path().is_dir() {
                let _ = std::fs::remove_dir(entry.path());
            }
        }
        Ok(())
    }
}

/// A group of its own for one execution environment, at one share; removed
/// when dropped (once its process has ended).
#[derive(Debug)]
pub(crate) struct Group {
    controller: &'static Controller,
    path: PathBuf,
}

impl Group {
    pub(crate) fn create(controller: &'static Controller, share: Share) -> Result<Self, String> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let path = controller.base().join(format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let group = Self { controller, path };
        let write = |file: &str, value: String| {
            std::fs::write(group.path.join(file), &value).map_err(|e| format!("{file} = {value}: {e}"))
        };
        match controller {
            // The period first: a quota above the old period is refused.
            Controller::V1(_) => {
                write("cpu.cfs_period_us", share.period_us.to_string())?;
                write("cpu.cfs_quota_us", share.quota_us.to_string())?;
            }
            Controller::V2(_) => write("cpu.max", format!("{} {}", share.quota_us, share.period_us))?,
        }
        // Read back: a figure is never reported as throttled unless the kernel
        // holds the quota.
        let applied = group.applied()?;
        if applied != (share.quota_us, share.period_us) {
            return Err(format!(
                "{}: the kernel holds {applied:?}, not {:?}",
                group.path.display(),
                (share.quota_us, share.period_us)
            ));
        }
        Ok(group)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file a process id is written to to move the process, all its
    /// threads with it, into the group.
    pub(crate) fn procs(&self) -> PathBuf {
        self.path.join("cgroup.procs")
    }

    pub(crate) fn add(&self, pid: u32) -> Result<(), String> {
        std::fs::write(self.procs(), pid.to_string()).map_err(|e| format!("{}: {e}", self.procs().display()))
    }

    /// The quota and period the kernel holds for the group.
    pub(crate) fn applied(&self) -> Result<(u64, u64), String> {
        let read = |file: &str| {
            std::fs::read_to_string(self.path.join(file))
                .map_err(|e| format!("{file}: {e}"))
                .map(|s| s.trim().to_owned())
        };
        let number = |s: &str| s.parse::<u64>().map_err(|e| format!("{s}: {e}"));
        match self.controller {
            Controller::V1(_) => Ok((
                number(&read("cpu.cfs_quota_us")?)?,
                number(&read("cpu.cfs_period_us")?)?,
            )),
            Controller::V2(_) => {
                let max = read("cpu.max")?;
                let (quota, period) = max.split_once(' ').ok_or(format!("cpu.max: {max}"))?;
                Ok((number(quota)?, number(period)?))
            }
        }
    }

    /// Periods counted, and periods throttled, since the group was made.
    pub(crate) fn stat(&self) -> Result<Stat, String> {
        let text = std::fs::read_to_string(self.path.join("cpu.stat")).map_err(|e| format!("cpu.stat: {e}"))?;
        Ok(parse_stat(&text))
    }

    /// The group as /proc/<pid>/cgroup names it: its path below the mount.
    pub(crate) fn name(&self) -> String {
        let mount = mount_point(&self.path);
        format!("/{}", self.path.strip_prefix(&mount).unwrap_or(&self.path).display())
    }

    /// The group `pid` sits in for this controller, from /proc/<pid>/cgroup.
    pub(crate) fn group_of(&self, pid: u32) -> Option<String> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
        let v2 = matches!(self.controller, Controller::V2(_));
        text.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let ours = if v2 {
                controllers.is_empty()
            } else {
                controllers.split(',').any(|c| c == "cpu")
            };
            ours.then(|| path.to_owned())
        })
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // Refused while a process is still in it; the next run's `prepare`
        // removes what is left.
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// The mount point `path` sits under: the longest mount that holds it.
fn mount_point(path: &Path) -> PathBuf {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(PathBuf::from)
        .filter(|m| path.starts_with(m))
        .max_by_key(|m| m.as_os_str().len())
        .unwrap_or_else(|| path.to_path_buf())
}

fn parse_stat(text: &str) -> Stat {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or(0)
    };
    Stat {
        periods: field("nr_periods "),
        throttled: field("nr_throttled "),
    }
}

/// The program and arguments that start `program` inside `group`, gated: a
/// shell writes its own pid to the group (its threads to be are then born
/// there), waits for a line on its standard input, and only then `exec`s the
/// program. So nothing of the program runs outside the quota, and the time of
/// the shell's own start is not counted: the clock starts at the line.
pub(crate) fn gated(group: &Group, program: &Path, args: &[String]) -> (PathBuf, Vec<String>) {
    let mut wrapped = vec![
        "-c".to_owned(),
        r#"echo $$ > "$0" && read -r _ && exec "$@""#.to_owned(),
        group.procs().display().to_string(),
        program.display().to_string(),
    ];
    wrapped.extend(args.iter().cloned());
    (PathBuf::from("/bin/sh"), wrapped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_the_memorys_part_of_a_core() {
        let s = Share::of(128, Period::Default);
        assert_eq!((s.quota_us, s.period_us), (7_235, 100_000));
        assert_eq!(Share::of(256, Period::Default).quota_us, 14_471);
        assert_eq!(Share::of(1_024, Period::Short).quota_us, 5_788);
        let whole = Share::of(FULL_CORE_MB, Period::Short);
        assert_eq!((whole.quota_us, whole.period_us), (10_000, 10_000));
        let more = Share::of(3_008, Period::Default);
        assert_eq!(more.quota_us, more.period_us, "capped at one core");
    }

    #[test]
    fn below_the_kernels_minimum_the_period_stretches_and_the_share_holds() {
        let s = Share::of(128, Period::Short);
        assert_eq!((s.quota_us, s.period_us), (1_000, 13_821));
        assert!((s.fraction() - 128.0 / 1_769.0).abs() < 1e-4, "{}", s.fraction());
        assert_eq!(Share::of(256, Period::Short).quota_us, 1_447);
    }

    #[test]
    fn the_controller_is_found_in_v1_and_in_v2() {
        let v1 = "cgroup /sys/fs/cgroup/cpuacct cgroup rw,cpuacct 0 0\ncgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n";
        assert_eq!(
            Controller::find(v1, "3:cpu,cpuacct:/job\n0::/\n").unwrap(),
            Controller::V1(PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/job"))
        );
        let none = "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n";
        assert!(
            Controller::find(none, "")
                .unwrap_err()
                .contains("no cgroup `cpu` controller")
        );
    }

    #[test]
    fn the_stat_counts_periods_and_throttling_in_both_versions() {
        let v1 = "nr_periods 40\nnr_throttled 12\nthrottled_time 9000000\n";
        assert_eq!(
            parse_stat(v1),
            Stat {
                periods: 40,
                throttled: 12
            }
        );
        let v2 = "usage_usec 1\nuser_usec 1\nsystem_usec 0\nnr_periods 7\nnr_throttled 3\nthrottled_usec 50\n";
        assert_eq!(
            parse_stat(v2),
            Stat {
                periods: 7,
                throttled: 3
            }
        );
    }

    /// The controller, or the test fails saying why, as for a missing emulator.
    fn controller() -> &'static Controller {
        Controller::get().unwrap_or_else(|why| {
            panic!(
                "the CPU quota of a memory size cannot be applied: {why}. The bench's tuning and this test need \
                 a writable cgroup `cpu` controller (v1 cpu.cfs_quota_us, or v2 cpu.max): run as root, or \
                 delegate a cgroup to this user"
            )
        })
    }

    /// Polls `ready` every 10 ms, for at most 30 s.
    fn until(what: &str, mut ready: impl FnMut() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !ready() {
            assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    #[test]
    fn a_gated_process_runs_inside_its_sizes_quota_and_is_throttled() {
        use std::io::Write as _;
        let share = Share::of(128, Period::Short);
        let group = Group::create(controller(), share).unwrap();
        assert_eq!(group.applied().unwrap(), (share.quota_us, share.period_us));
        // A CPU-bound probe: a shell's busy loop.
        let (program, args) = gated(
            &group,
            Path::new("/bin/sh"),
            &["-c".into(), "while :; do :; done".into()],
        );
        let mut child = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        until("the gate to enter the group", || {
            group.group_of(pid).as_deref() == Some(group.name().as_str())
        });
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        until("the probe to be throttled", || {
            group.stat().is_ok_and(|s| s.throttled > 0)
        });
        // Still there after the exec: the program itself ran in the group.
        assert_eq!(group.group_of(pid), Some(group.name()));
        let stat = group.stat().unwrap();
        assert!(stat.periods >= stat.throttled && stat.throttled > 0, "{stat:?}");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
