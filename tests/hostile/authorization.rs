//! The authorization matrix: every HTTP route of the catalog, called by each of
//! eight callers, answers what the route's access and the caller's state say,
//! and nobody reads or changes another user's items.

use std::time::Instant;

use futures::future::join_all;
use integration_tests::http::Event;
use integration_tests::test_app::TestApp;
use serde_json::json;
use user_service::catalog::{Access, Function};
use user_service::domain::UserStatus;

use crate::support::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    /// The victim, active, acting on their own account.
    Owner,
    /// Another active user, naming the victim's ids where the route takes one.
    OtherUser,
    /// An active admin: on the user routes, just another user.
    Admin,
    /// A suspended user, on their own account.
    Suspended,
    /// A deleted user whose access token is still valid, on their former account.
    Deleted,
    /// A user whose account was recovered since their token's sign-in, on
    /// their own account: the token is still valid to the HTTP API.
    Revoked,
    /// An admin whose own account is suspended, on their own account.
    SuspendedAdmin,
    /// No claims at all (the authorizer never ran).
    Anonymous,
}

/// Cells run in this order on each route's table: the callers who may change
/// the victim's items go last, so every earlier cell sees the fixture intact.
const ORDER: [Caller; 8] = [
    Caller::Anonymous,
    Caller::Deleted,
    Caller::Revoked,
    Caller::Suspended,
    Caller::SuspendedAdmin,
    Caller::OtherUser,
    Caller::Admin,
    Caller::Owner,
];

/// What the service answers: `(status, code)`, `code` for a problem only.
/// Derived from the route's access, whether it only reads (GET), whether it
/// names an address by id, and the caller's state; `success` is the route's
/// normal status. Each rule cites docs/api.md or docs/security.md, where it is documented.
fn expected(route: &Function, caller: Caller, success: u16) -> (u16, Option<&'static str>) {
    const UNAUTHENTICATED: (u16, Option<&str>) = (401, Some("UNAUTHENTICATED"));
    const FORBIDDEN: (u16, Option<&str>) = (403, Some("FORBIDDEN"));
    const INACTIVE: (u16, Option<&str>) = (403, Some("ACCOUNT_INACTIVE"));
    const NOT_FOUND: (u16, Option<&str>) = (404, Some("NOT_FOUND"));
    const REVOKED: (u16, Option<&str>) = (401, Some("SESSION_REVOKED"));
    let ok = (success, None);
    let reads = method_of(route) == "GET";
    if caller == Caller::Anonymous {
        return UNAUTHENTICATED;
    }
    if route.access() == Access::Admin {
        // "Admin routes need the admin group and the admin's own account to be active."
        return if caller == Caller::Admin { ok } else { FORBIDDEN };
    }
    match caller {
        Caller::Owner => ok,
        // "another user's emailId: 404" (not 403: existence is not revealed);
        // without an id they act on their own account. Admins have no powers here.
        Caller::OtherUser | Caller::Admin if names_an_email_id(route) => NOT_FOUND,
        // An invitation is accepted only by who holds its address, verified
        // (docs/organizations.md, Invitations).
        Caller::OtherUser | Caller::Admin if carries_an_invitation_token(route) => {
            (403, Some("INVITATION_ADDRESS_NOT_HELD"))
        }
        // Enrollment is for who holds a verified address at the domain: the
        // owner's address is no one else's proof (docs/organizations.md).
        Caller::OtherUser | Caller::Admin if joins_by_the_owners_address(route) => (403, Some("ENROLLMENT_NOT_OPEN")),
        // An organization is its members' (docs/organizations.md): anyone
        // else learns nothing of it, as of an id that names nothing; the
        // deployment's admins act on any, audited.
        Caller::OtherUser if names_an_organization(route) => (404, Some("ORGANIZATION_NOT_FOUND")),
        Caller::Admin if names_an_organization(route) => ok,
        Caller::OtherUser | Caller::Admin => ok,
        // "ACCOUNT_INACTIVE: a suspended user writing"; reads are allowed.
        Caller::Suspended | Caller::SuspendedAdmin if reads => ok,
        Caller::Suspended | Caller::SuspendedAdmin => INACTIVE,
        // A deleted user's token stays valid until it expires: every route
        // answers what GET /me does, 404 (the issue "Known defects closed").
        Caller::Deleted => NOT_FOUND,
        // "Every session from before ends": every route of the user's own,
        // reads and writes alike (docs/api.md, A way back for the former address).
        Caller::Revoked => REVOKED,
        Caller::Anonymous => UNAUTHENTICATED,
    }
}

struct Cells {
    checked: usize,
    failures: Vec<String>,
    by_caller: std::collections::BTreeMap<String, usize>,
}

/// Whom the cells call as, and on: built once, copied into each route's table.
#[derive(Clone)]
struct Cast {
    victim: Account,
    other: Account,
    admin: Account,
    suspended: Account,
    deleted: Account,
    suspended_admin: Account,
    revoked: Account,
    admins_victim: Account,
    /// When the revoked caller's sessions ended.
    recovered_at: i64,
}

async fn cast(app: TestApp) -> Cast {
    let (victim, suspended, deleted, suspended_admin, revoked, admins_victim) = tokio::join!(
        account(&app, "victim"),
        account(&app, "suspended"),
        account(&app, "deleted"),
        account(&app, "suspended-admin"),
        account(&app, "revoked"),
        account(&app, "bystander"),
    );
    // These two only ever name the victim's addresses, or act on their profile.
    let other = profile_only(&app, "other").await;
    let admin = profile_only(&app, "admin").await;
    set_status(&app, &suspended, UserStatus::Suspended).await;
    set_status(&app, &deleted, UserStatus::Deleted).await;
    set_status(&app, &suspended_admin, UserStatus::Suspended).await;
    let recovered_at = end_sessions(&app, &revoked).await;
    // Past the minute between codes: the owner's send-verification is allowed.
    app.clock.advance(61);
    Cast {
        victim,
        other,
        admin,
        suspended,
        deleted,
        suspended_admin,
        revoked,
        admins_victim,
        recovered_at,
    }
}

/// Every caller against one route, on a table of its own holding the cast.
async fn route_matrix(route: &'static Function, fixture: &Fixture<Cast>) -> Cells {
    let (app, calls, cast) = fixture.copy().await;
    let Cast {
        victim,
        other,
        admin,
        suspended,
        deleted,
        suspended_admin,
        revoked,
        admins_victim,
        recovered_at,
    } = cast;

    let mut cells = Cells {
        checked: 0,
        failures: Vec::new(),
        by_caller: Default::default(),
    };
    let victims_items = items_naming(&snapshot(&app).await, &victim.sub);
    calls.take();
    for caller in ORDER {
        let (who, owner, admin_groups) = match caller {
            Caller::Owner => (&victim, &victim, false),
            Caller::OtherUser => (&other, &victim, false),
            Caller::Admin => (&admin, &victim, true),
            Caller::Suspended => (&suspended, &suspended, false),
            Caller::Deleted => (&deleted, &deleted, false),
            Caller::Revoked => (&revoked, &revoked, false),
            Caller::SuspendedAdmin => (&suspended_admin, &suspended_admin, true),
            Caller::Anonymous => (&victim, &victim, false),
        };
        // The admin routes always target the victim. A deployment admin acts
        // on any organization (allowed, audited): on another's, so that the
        // victim's stays as the owner's cell, last, finds it.
        let owner = if route.access() == Access::Admin {
            &victim
        } else if caller == Caller::Admin && names_an_organization(route) {
            &admins_victim
        } else {
            owner
        };
        let target = Target {
            caller: who,
            owner,
            admin_groups,
            // Only the routes that take If-Match need the caller's version.
            if_match: if Event::of(route).0["headers"]["if-match"].is_string() {
                if_match_for(&app, route, owner).await
            } else {
                String::new()
            },
        };
        let (mut event, success) = valid_request(route, &target);
        match caller {
            Caller::Anonymous => event = event.anonymous(),
            // Signed in before the recovery, recently enough for any route.
            Caller::Revoked => event = event.signed_in_at(recovered_at - 1),
            _ => {}
        }
        let (status, code) = expected(route, caller, success);
        let reply = send(&app, route, event).await;
        let (_, written) = calls.take();
        let cell = format!("{} as {caller:?}", route.name);
        *cells.by_caller.entry(format!("{caller:?}")).or_default() += 1;
        cells.checked += 1;
        let reply = match reply {
            Ok(reply) => reply,
            Err(panic) => {
                cells.failures.push(format!("{cell}: {panic}"));
                continue;
            }
        };
        let got = (reply.status, reply.body["code"].as_str());
        let mut wrong = Vec::new();
        if got != (status, code) {
            wrong.push(format!(
                "expected {status} {code:?}, got {} {:?}: {}",
                got.0, got.1, reply.body
            ));
        }
        if code.is_some()
            && let Err(e) = check_problem(&reply)
        {
            wrong.push(e);
        }
        // The owner's writes are seen: the recorder is not blind.
        if caller == Caller::Owner && method_of(route) != "GET" && got.0 == success && written.is_empty() {
            wrong.push("the owner's write was not recorded".to_owned());
        }
        // A refusal writes nothing at all.
        if code.is_some() && !written.is_empty() {
            wrong.push(format!("a refused request wrote: {written:?}"));
        }
        // Nobody but the victim (or an admin through an admin route) changes
        // the victim's items.
        let may_change_victim = caller == Caller::Owner || (route.access() == Access::Admin && caller == Caller::Admin);
        if !may_change_victim {
            // Only a request that wrote can have changed them: look then.
            if !written.is_empty() {
                let now = items_naming(&snapshot(&app).await, &victim.sub);
                let changed = diff(&victims_items, &now);
                if !changed.is_empty() {
                    wrong.push(format!("the victim's items changed: {changed:?}"));
                }
            }
            // No answer to another caller carries the victim's ids or addresses.
            let text = reply.body.to_string();
            for secret in [&victim.sub, &victim.primary, &victim.email_of_secondary] {
                if text.contains(secret.as_str()) {
                    wrong.push(format!("the answer shows the victim's {secret}"));
                }
            }
        }
        if !wrong.is_empty() {
            cells.failures.push(format!("{cell}: {}", wrong.join("; ")));
        }
    }
    app.assert_invariants().await;
    cells
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_answers_every_caller_as_its_access_says() {
    let started = Instant::now();
    // A route anyone may call answers no caller differently: what it reads is
    // its own proof (integration/recovery.rs holds it to that).
    let routes: Vec<_> = routes().into_iter().filter(|r| r.access() != Access::Anyone).collect();
    let fixture = Box::pin(Fixture::build(cast)).await;
    let results = join_all(routes.iter().map(|route| route_matrix(route, &fixture))).await;
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut by_caller = std::collections::BTreeMap::<String, usize>::new();
    for cells in results {
        checked += cells.checked;
        failures.extend(cells.failures);
        for (k, v) in cells.by_caller {
            *by_caller.entry(k).or_default() += v;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    write_figures(
        "authorization",
        json!({
            "routes": routes.len(),
            "callers": ORDER.len(),
            "cells_checked": checked,
            "cells_by_caller": by_caller,
            "failures": failures.len(),
            "failure_list": failures,
            "wall_seconds": seconds,
        }),
    );
    eprintln!(
        "authorization: {} routes x {} callers = {checked} cells, {} failures, {seconds:.1} s",
        routes.len(),
        ORDER.len(),
        failures.len()
    );
    assert_eq!(checked, routes.len() * ORDER.len());
    assert!(
        failures.is_empty(),
        "{} cells failed:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}
