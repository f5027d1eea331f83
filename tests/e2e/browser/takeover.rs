//! The browser tour's takeover: a stolen session hands the account over, the
//! owner takes it back from the outbox, and every session from before ends.

use fantoccini::Locator;
use fantoccini::key::Key;
use serde_json::json;

use super::Page;

/// A stolen session hands the account over; the owner takes it back with the
/// link in the notice to their former address, and the thief's session is refused.
pub(super) async fn taken_and_taken_back(page: &mut Page, run: &str, outbox: &fantoccini::wd::WindowHandle) {
    let owner = format!("owner-{run}@example.com");
    let thief = format!("thief-{run}@example.com");
    let settings = page.client.window().await.unwrap();
    page.type_and_enter("#sign-up-email", &owner).await;
    assert_eq!(page.said().await, Ok("Your account is ready.".into()));
    let stolen = page.token().await;

    // The thief's browser: a tab of its own (its own sessionStorage), holding
    // the owner's token, fresh enough for the changes that need a recent sign-in.
    let thiefs = page.client.new_window(true).await.unwrap().handle;
    page.client.switch_to_window(thiefs.clone()).await.unwrap();
    page.goto("/").await;
    page.find("#sign-up-form").await;
    page.client
        .execute(
            "sessionStorage.setItem('user-service.accessToken', arguments[0])",
            vec![stolen],
        )
        .await
        .unwrap();
    page.client.refresh().await.unwrap();
    page.until("the thief's tab is in the owner's session", || async {
        (page.text("#signed-in-as").await == owner).then_some(())
    })
    .await;
    // Their address, verified from their own mailbox, made primary; then the
    // owner's address removed once Cognito follows.
    page.type_and_enter("#new-email", &thief).await;
    page.said().await.expect("the thief's address added");
    page.client.switch_to_window(outbox.clone()).await.unwrap();
    let body = page.outbox_message(&thief, "Your code to verify").await;
    let code = integration_tests::moto::code_in(&body).unwrap_or_else(|| panic!("a code: {body}"));
    page.client.switch_to_window(thiefs.clone()).await.unwrap();
    let field = page.in_row(&thief, ".verify-code").await;
    field.send_keys(&(code + &Key::Enter)).await.unwrap();
    assert_eq!(page.said().await, Ok(format!("{thief} is verified.")));
    page.in_row(&thief, ".make-primary").await.click().await.unwrap();
    page.said().await.expect("the thief's address made primary");
    page.until_done("the owner's address is removed", "sign", async || {
        page.in_row(&owner, ".remove").await.click().await.ok()
    })
    .await;
    assert!(page.row_text(&owner).await.is_none());
    assert_eq!(page.text("#primary-email").await, thief);
    page.shot("taken-over").await;

    // The owner's mailbox: the notice, with the way back as a link to follow.
    page.client.switch_to_window(outbox.clone()).await.unwrap();
    let notice = page.outbox_body(&owner, "Your primary email address was changed").await;
    let link = notice
        .find(Locator::Css("a"))
        .await
        .unwrap_or_else(|err| panic!("a link in the notice: {err}"));
    let href = link.attr("href").await.unwrap().unwrap_or_default();
    assert!(href.starts_with(&format!("{}/recovery#token=", page.api)), "{href}");
    assert_eq!(link.attr("rel").await.unwrap().as_deref(), Some("noopener noreferrer"));
    page.shot("outbox-recovery-link").await;
    link.click().await.unwrap();
    page.new_window(&[&settings, outbox, &thiefs]).await;
    let button = page.find("#recover").await;
    let address = page.script("return location.href").await;
    assert_eq!(
        address,
        json!(format!("{}/recovery", page.api)),
        "the token leaves the address bar"
    );
    page.shot("recovery-page").await;
    button.click().await.unwrap();
    let done = page
        .until("the account is taken back", || async {
            let status = page.text("#status").await;
            status.starts_with("Done.").then_some(status)
        })
        .await;
    assert!(done.contains(&owner), "{done}");
    page.shot("recovered").await;
    page.client.close_window().await.unwrap();

    // The thief's session, still open, is refused at its next request, and
    // their address no longer signs in.
    page.client.switch_to_window(thiefs).await.unwrap();
    page.type_and_enter("#first-name", "Mallory").await;
    let refused = page.said().await.expect_err("the thief's session after the recovery");
    assert!(refused.contains("recovered"), "{refused}");
    assert!(page.displayed("#sign-in-form").await, "signed out");
    assert_eq!(page.token().await, json!(null));
    page.shot("thief-refused").await;
    page.type_and_enter("#sign-in-email", &thief).await;
    page.said().await.expect_err("the thief's address signs in");
    page.client.close_window().await.unwrap();

    // The owner's own tab held a session from before the recovery too: at its
    // next request (a reload) it is signed out, told why. The owner signs in
    // with their address (once Cognito has followed), and finds it the one
    // verified primary.
    page.client.switch_to_window(settings).await.unwrap();
    page.client.refresh().await.unwrap();
    let ended = page
        .said()
        .await
        .expect_err("the owner's session from before the recovery");
    assert!(ended.contains("recovered"), "{ended}");
    assert!(page.displayed("#sign-in-form").await, "signed out");
    let signed_in = page
        .until_done("the owner signs in again", "recovered", async || {
            page.type_and_enter("#sign-in-email", &owner).await;
            Some(())
        })
        .await;
    assert!(
        signed_in.starts_with("Signed in. Your account was recovered"),
        "{signed_in}"
    );
    assert_eq!(page.text("#primary-email").await, owner);
    assert!(page.row_text(&thief).await.is_none(), "the thief's address is gone");
    assert!(
        page.row_text(&owner)
            .await
            .is_some_and(|t| t.contains("Primary") && t.contains("Verified"))
    );
    page.shot("owner-back").await;
}
