//! Codes by Amazon SES (moto's server): the message as sent, a code that
//! verifies, and a failed delivery that loses nothing and leaks nothing.

use integration_tests::logs::LogCapture;
use integration_tests::moto::{self, Moto};
use user_service::App;
use user_service::domain::UserId;
use user_service::mail::Sender;

use crate::handler_support::*;

async fn app_sending_with(sender: user_service::mail::SesSender) -> TestApp {
    let mut app = TestApp::spawn().await;
    app.sender = Some(Sender::Ses(sender));
    app
}

#[tokio::test]
async fn a_code_sent_through_ses_verifies_the_address() {
    let moto = Moto::start();
    let app = app_sending_with(moto.ses_sender().await).await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "ada@example.com").await;

    let id = app.add_address(ADA, "ada.work@example.com").await;
    let mail = moto.mail_to("ada.work@example.com").await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    assert_eq!(mail[0].from, moto::SENDER);
    assert_eq!(
        mail[0].subject,
        "Your code to verify this email address (expires in 15 minutes)"
    );
    let code = mail[0].code().expect("the message carries the code");
    assert!(mail[0].body.contains("expires in 15 minutes"));

    app.verify_email(ADA, &id, &code).await.assert_status(200);
    let emails = app.store.list_emails(&UserId::parse(ADA).unwrap()).await.unwrap();
    assert!(emails.iter().all(|e| e.is_verified));
    // Neither the address nor the code reached the log.
    let text = logs.text();
    assert!(
        !text.contains("ada.work@example.com") && !text.contains(&code),
        "{text}"
    );
}

#[tokio::test]
async fn a_failed_delivery_loses_nothing_and_a_resend_delivers() {
    let moto = Moto::start();
    // The sender's identity is not verified yet: SES rejects the message.
    let app = app_sending_with(moto.unverified_ses_sender()).await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "ada@example.com").await;

    let id = app.add_address(ADA, "ada.work@example.com").await;
    assert!(moto.sent_mail().await.is_empty());
    let emails = app.store.list_emails(&UserId::parse(ADA).unwrap()).await.unwrap();
    let added = emails.iter().find(|e| e.email_id.to_string() == id).unwrap();
    assert!(!added.is_verified, "the address stays, unverified");
    let failure = logs
        .lines()
        .into_iter()
        .find(|l| l["message"] == "verification code not delivered")
        .expect("the failure is logged");
    assert_eq!(failure["email_id"], id.as_str());
    assert!(
        failure["cause"].as_str().unwrap().contains("MessageRejected"),
        "{failure}"
    );
    assert!(!logs.text().contains("@example.com"), "{}", logs.text());

    // Once the identity is verified, send-verification issues a new code.
    let mut app = app;
    app.sender = Some(Sender::Ses(moto.ses_sender().await));
    app.clock.advance(app.store.config().resend_interval_seconds);
    app.send_verification(ADA, &id).await.assert_status(202);
    let mail = moto.mail_to("ada.work@example.com").await;
    assert_eq!(mail.len(), 1);
    app.verify_email(ADA, &id, &mail[0].code().unwrap())
        .await
        .assert_status(200);
}

/// The environment of a deployed function, as `lookup` sees it.
fn deployed(extra: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> + Copy {
    move |name: &str| {
        [
            ("TABLE_NAME", "users"),
            ("USER_POOL_ID", "us-east-1_pool"),
            (
                user_service::config::VERIFICATION_KEY.name(),
                integration_tests::ddb::TEST_KEY,
            ),
        ]
        .iter()
        .chain(extra)
        .find(|(n, _)| *n == name)
        .map(|(_, v)| (*v).to_owned())
    }
}

#[tokio::test]
async fn only_functions_that_send_set_up_a_sender() {
    use user_service::catalog;
    const SES: &[(&str, &str)] = &[
        (user_service::config::SENDER_ADDRESS.name(), "no-reply@example.com"),
        (user_service::config::SES_CONFIGURATION_SET.name(), "user-service"),
    ];
    const BUS: &[(&str, &str)] = &[
        (user_service::config::EVENT_BUS_NAME.name(), "user-service-events"),
        (user_service::config::EVENT_SOURCE.name(), "urn:user-service:test"),
    ];
    for function in catalog::FUNCTIONS {
        // The publisher needs its bus, and refuses to start without it.
        let needs = if function.publishes_events {
            let err = App::from_lookup(function, deployed(&[])).await.map(|_| ()).unwrap_err();
            assert!(err.to_string().starts_with("EVENT_BUS_NAME is not set"), "{err}");
            BUS
        } else {
            &[]
        };
        // With no mail settings at all: only the functions that send refuse to start.
        let bare = App::from_lookup(function, deployed(needs)).await;
        if function.sends_email {
            let err = bare.map(|_| ()).unwrap_err().to_string();
            assert!(err.starts_with("SENDER_ADDRESS is not set"), "{}: {err}", function.name);
            let app = App::from_lookup(function, deployed(SES)).await.unwrap();
            assert!(matches!(app.sender, Some(Sender::Ses(_))), "{}", function.name);
        } else {
            assert!(bare.unwrap().sender.is_none(), "{} has no sender", function.name);
        }
    }
    // A deployed function never falls back to the log sender.
    let err = App::from_lookup(&catalog::ADD_EMAIL, deployed(&[("VERIFICATION_SENDER", "log")]))
        .await
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("ALLOW_LOG_SENDER=true"), "{err}");
}
