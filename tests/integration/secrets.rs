//! The verification key from Secrets Manager (moto's server), as a deployed
//! function reads it at init, and the configuration errors around it.

use integration_tests::ddb;
use integration_tests::moto::Moto;
use user_service::config::ConfigError;
use user_service::domain::EmailId;
use user_service::secrets::verification_key;

const SECRET_ID_VAR: &str = user_service::config::VERIFICATION_KEY_SECRET_ID.name();
const DEV_KEY_VAR: &str = user_service::config::VERIFICATION_KEY.name();
use user_service::verification::VerificationCode;
use user_service::verification_key::VerificationKey;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

#[tokio::test]
async fn the_key_comes_from_the_secret_named_in_the_environment() {
    let moto = Moto::start();
    let sdk = moto.sdk_config();
    let secrets = aws_sdk_secretsmanager::Client::new(&sdk);
    let generated = "Qm9vdHN0cmFwcGVkIGJ5IHRoZSB0ZW1wbGF0ZSwgNjQgY2hhcnMgbG9uZyEhIQ";
    let arn = secrets
        .create_secret()
        .name("user-service/verification-key")
        .secret_string(generated)
        .send()
        .await
        .unwrap()
        .arn
        .unwrap();

    // The secret wins over a development key, so a deployed stack never uses one.
    let key = verification_key(env(&[(SECRET_ID_VAR, &arn), (DEV_KEY_VAR, ddb::TEST_KEY)]), &sdk)
        .await
        .unwrap();
    let expected = VerificationKey::from_secret(generated.as_bytes()).unwrap();
    let code = VerificationCode::parse("123456").unwrap();
    let id = EmailId::new();
    assert_eq!(code.hash(&key, id), code.hash(&expected, id));
    assert_ne!(code.hash(&key, id), code.hash(&ddb::test_key(), id));

    // A secret that does not exist stops the function at init, naming the variable.
    let missing = verification_key(env(&[(SECRET_ID_VAR, "no-such-secret")]), &sdk)
        .await
        .unwrap_err();
    assert!(
        matches!(&missing, ConfigError::Unavailable { name, .. } if *name == SECRET_ID_VAR),
        "{missing}"
    );

    // A secret too short to be a key is refused.
    let short = secrets
        .create_secret()
        .name("short")
        .secret_string("too short")
        .send()
        .await
        .unwrap()
        .arn
        .unwrap();
    let err = verification_key(env(&[(SECRET_ID_VAR, &short)]), &sdk)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "VERIFICATION_KEY_SECRET_ID is invalid: the verification key must be at least 32 bytes"
    );
}

#[tokio::test]
async fn without_a_key_the_function_does_not_start() {
    let sdk = aws_config::SdkConfig::builder().build();
    let err = verification_key(env(&[]), &sdk).await.unwrap_err();
    assert!(
        err.to_string().starts_with("VERIFICATION_KEY_SECRET_ID is not set"),
        "{err}"
    );
    let dev = verification_key(env(&[(DEV_KEY_VAR, ddb::TEST_KEY)]), &sdk)
        .await
        .unwrap();
    let code = VerificationCode::parse("123456").unwrap();
    let id = EmailId::new();
    assert_eq!(code.hash(&dev, id), code.hash(&ddb::test_key(), id));
}
