//! Child processes that lead their own process group: signalled as a group, and
//! waited for by condition, never by a fixed sleep.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::wait;

/// Sends `signal` (`TERM`, `INT`, `KILL`) to every process of the group `pgid`.
pub fn signal_group(pgid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args(["-s", signal, "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status();
}

/// Whether any process of the group `pgid` is still alive.
pub fn group_alive(pgid: u32) -> bool {
    Command::new("pgrep")
        .args(["-g", &pgid.to_string()])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Waits up to `bound` for `child` to exit; whether it did.
pub fn wait_exit(child: &mut Child, bound: Duration) -> bool {
    wait::poll(bound, || child.try_wait().ok().flatten()).is_some()
}

/// Waits up to `bound` for every process of the group to be gone; whether they are.
pub fn wait_group_gone(pgid: u32, bound: Duration) -> bool {
    wait::poll(bound, || (!group_alive(pgid)).then_some(())).is_some()
}

/// Stops a group leader and everything in its group: TERM, a grace period for a
/// clean exit, then KILL for whatever is left. `members` are children of ours in
/// the same group; they are reaped too, so none lingers as a zombie.
pub fn stop_group(leader: &mut Child, members: &mut [Child], grace: Duration) {
    let pgid = leader.id();
    signal_group(pgid, "TERM");
    let clean = wait_exit(leader, grace) && members.iter_mut().all(|m| wait_exit(m, grace));
    if !clean {
        signal_group(pgid, "KILL");
    }
    let _ = leader.wait();
    for member in members {
        let _ = member.wait();
    }
    wait_group_gone(pgid, wait::GENEROUS);
}
