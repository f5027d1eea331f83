//! Sequences the model found, replayed step by step through the same machine:
//! each pins down one disagreement between the store and its rules.

use proptest::test_runner::Config;
use proptest_state_machine::StateMachineTest;
use user_service::config::StoreConfig;

use crate::reference::{Model, Spelling, Transition, mixed, tight};
use crate::system::StoreMachine;

/// Runs `transitions` from an empty store under `config`, checking every step.
fn replay(config: StoreConfig, transitions: Vec<Transition>) {
    StoreMachine::test_sequential(Config::default(), Model::new(config), transitions, None);
}

/// A wrong code's `attemptsLeft` counts the wrong code just sent against the
/// rolling per-address limit as well as the per-code one: after it, no guess is
/// left, and the next one is refused with TOO_MANY_ATTEMPTS.
#[test]
fn attempts_left_counts_the_wrong_code_just_sent_against_the_daily_limits() {
    use Transition::*;
    let (user, addr) = (0, 1);
    replay(
        tight(),
        vec![
            SignUp {
                user,
                addr: 0,
                spelling: Spelling::Lower,
            },
            AddEmail {
                user,
                addr,
                spelling: Spelling::Lower,
            },
            Verify {
                user,
                addr,
                right_code: false,
            },
            Verify {
                user,
                addr,
                right_code: false,
            },
            AdvanceClock { seconds: 61 },
            ResendCode { user, addr },
            // The third wrong code for the address: its limit (3 a day) is reached.
            Verify {
                user,
                addr,
                right_code: false,
            },
            AdvanceClock { seconds: 61 },
            ResendCode { user, addr },
            Verify {
                user,
                addr,
                right_code: true,
            },
        ],
    );
}

/// An update at a version the profile has left is refused with the current
/// version, even when it changes nothing.
#[test]
fn a_repeated_update_at_a_stale_version_is_refused() {
    use Transition::*;
    let update = UpdateProfile {
        user: 0,
        expected_version: 1,
        first_name: None,
        phone: None,
    };
    replay(
        tight(),
        vec![
            SignUp {
                user: 0,
                addr: 0,
                spelling: Spelling::Lower,
            },
            update.clone(),
            update,
        ],
    );
}

/// Once an address's count of codes is full, a newcomer still gets its first
/// codes, each with one attempt: a wrong one spends it, a resend gives another
/// single attempt, and the right code verifies.
#[test]
fn a_code_past_the_addresss_count_is_sent_with_one_attempt() {
    use Transition::*;
    let (stranger, owner, addr) = (0, 1, 2);
    let sign_up = |user, addr| SignUp {
        user,
        addr,
        spelling: Spelling::Lower,
    };
    let add = |user| AddEmail {
        user,
        addr,
        spelling: Spelling::Lower,
    };
    let verify = |user, right_code| Verify { user, addr, right_code };
    replay(
        tight(),
        vec![
            sign_up(stranger, 0),
            sign_up(owner, 1),
            // The stranger fills the address's count (3 a day here).
            add(stranger),
            AdvanceClock { seconds: 61 },
            ResendCode { user: stranger, addr },
            AdvanceClock { seconds: 61 },
            ResendCode { user: stranger, addr },
            RemoveEmail { user: stranger, addr },
            add(owner),
            verify(owner, false),
            verify(owner, true),
            AdvanceClock { seconds: 61 },
            ResendCode { user: owner, addr },
            verify(owner, true),
        ],
    );
}

/// A former primary its owner removed and added back unverified stays
/// reserved to them: the address is owned (a sign-up with it is another
/// account's address, refused for good), not merely held unverified.
#[test]
fn a_former_primary_added_back_unverified_is_owned_while_reserved() {
    use Transition::*;
    let (owner, newcomer) = (0, 1);
    let add = |addr| AddEmail {
        user: owner,
        addr,
        spelling: Spelling::Lower,
    };
    let verify = |addr| Verify {
        user: owner,
        addr,
        right_code: true,
    };
    replay(
        mixed(),
        vec![
            SignUp {
                user: owner,
                addr: 0,
                spelling: Spelling::Lower,
            },
            // Two switches, so the first one's address is no longer Cognito's and can go.
            add(1),
            verify(1),
            SetPrimary { user: owner, addr: 1 },
            add(2),
            verify(2),
            SetPrimary { user: owner, addr: 2 },
            RemoveEmail { user: owner, addr: 1 },
            add(1),
            IsOwned { addr: 1 },
            SignUp {
                user: newcomer,
                addr: 1,
                spelling: Spelling::Lower,
            },
            CheckAvailability {
                addr: 1,
                spelling: Spelling::Lower,
            },
        ],
    );
}
