//! The settings page and the outbox of `make dev`, in a real browser: headless
//! Chromium (Debian's `chromium` and `chromium-driver`) over WebDriver goes
//! through the whole tour a newcomer would, by keyboard where a person would
//! type, and saves a screenshot of each step to `target/browser-tour/`.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use futures::FutureExt;
use integration_tests::lambda::free_port;
use integration_tests::wait;
use integration_tests::workspace_root;
use serde_json::json;

mod takeover;

/// How long one step may take: a debug build on a busy machine.
const STEP: Duration = wait::GENEROUS;

const INSTALL: &str = "the browser tour needs Chromium and its WebDriver: on Debian \
     `sudo apt-get install chromium chromium-driver`, or let `make test` install them with \
     `ALLOW_SYSTEM_INSTALL=1 make test` (scripts/browser install); CHROME_BIN and CHROMEDRIVER \
     name other paths";

/// Where the screenshots go.
fn screenshots() -> PathBuf {
    workspace_root().join("target/browser-tour")
}

fn program(var: &str, names: &[&str]) -> PathBuf {
    if let Some(path) = std::env::var_os(var) {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "{var}={} is no file: {INSTALL}", path.display());
        return path;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| panic!("{} is not installed: {INSTALL}", names[0]))
}

/// The browser and its driver. Fails the test, saying how to install them,
/// when either is missing: called before `make dev` starts, so that takes no time.
pub(crate) fn require() -> Browser {
    Browser {
        chromium: program("CHROME_BIN", &["chromium", "chromium-browser", "google-chrome"]),
        driver: program("CHROMEDRIVER", &["chromedriver"]),
    }
}

/// Where Chromium and chromedriver are.
pub(crate) struct Browser {
    chromium: PathBuf,
    driver: PathBuf,
}

/// chromedriver on 127.0.0.1, stopped when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start(driver: &Path, log: &Path) -> Self {
        let port = free_port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| panic!("{} does not start ({err}): {INSTALL}", driver.display()));
        wait::until(
            format_args!("chromedriver to listen ({INSTALL})"),
            Duration::from_secs(30),
            || std::net::TcpStream::connect(("127.0.0.1", port)).ok(),
        );
        Self { child, port }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The tour against `make dev`'s local API at `api`. The screenshots are
/// `target/browser-tour/NN-step.png`; a failure adds `failed.png`.
pub(crate) fn tour(browser: &Browser, api: &str) {
    let dir = screenshots();
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let driver = Driver::start(&browser.driver, &dir.join("chromedriver.log"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut capabilities = fantoccini::wd::Capabilities::new();
        capabilities.insert("browserName".into(), json!("chrome"));
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": browser.chromium,
                // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
                "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--window-size=1000,1300", "--lang=en-US"],
            }),
        );
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{}", driver.port))
            .await
            .unwrap_or_else(|err| panic!("no browser session ({err}): {INSTALL}"));
        let mut page = Page {
            client: client.clone(),
            api: api.trim_end_matches('/').to_owned(),
            dir: dir.clone(),
            step: 0,
        };
        let started = Instant::now();
        let outcome = std::panic::AssertUnwindSafe(steps(&mut page)).catch_unwind().await;
        eprintln!(
            "browser tour: {} screenshots in {:.1} s",
            page.step,
            started.elapsed().as_secs_f64()
        );
        if outcome.is_err()
            && let Ok(png) = client.screenshot().await
        {
            let _ = std::fs::write(dir.join("failed.png"), png);
        }
        let _ = client.close().await;
        if let Err(panic) = outcome {
            std::panic::resume_unwind(panic);
        }
    });
}

struct Page {
    client: Client,
    api: String,
    dir: PathBuf,
    step: usize,
}

/// What the page said after an action: its status line, or its error.
type Said = Result<String, String>;

impl Page {
    async fn shot(&mut self, name: &str) {
        self.step += 1;
        let png = self.client.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        std::fs::write(self.dir.join(format!("{:02}-{name}.png", self.step)), png).unwrap();
    }

    async fn goto(&self, path: &str) {
        self.client.goto(&format!("{}{path}", self.api)).await.unwrap();
    }

    async fn find(&self, css: &str) -> Element {
        self.client
            .wait()
            .at_most(STEP)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|err| panic!("{css}: {err}"))
    }

    async fn text(&self, css: &str) -> String {
        match self.client.find(Locator::Css(css)).await {
            Ok(element) => element.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    async fn displayed(&self, css: &str) -> bool {
        match self.client.find(Locator::Css(css)).await {
            Ok(element) => element.is_displayed().await.unwrap_or(false),
            Err(_) => false,
        }
    }

    /// Types `text` into the field and presses Enter: the form is submitted by keyboard.
    async fn type_and_enter(&self, css: &str, text: &str) {
        let field = self.find(css).await;
        field.clear().await.unwrap();
        field.send_keys(&(text.to_owned() + &Key::Enter)).await.unwrap();
    }

    /// The page's session becomes one whose sign-in was `seconds_ago` ago:
    /// make dev's token for `email` with that `auth_time`, as a refresh
    /// long after the sign-in would give.
    async fn old_session(&self, email: &str, seconds_ago: u64) {
        let stored = self
            .client
            .execute_async(
                "const [email, ago, done] = arguments;
                 fetch('/local/token', {method: 'POST', headers: {'content-type': 'application/json'},
                                        body: JSON.stringify({email, signedInSecondsAgo: ago})})
                   .then((r) => r.json())
                   .then((b) => { sessionStorage.setItem('user-service.accessToken', b.token); done(true); },
                         (e) => done(String(e)));",
                vec![json!(email), json!(seconds_ago)],
            )
            .await
            .unwrap();
        assert_eq!(stored, json!(true), "an old session for {email}");
    }

    async fn click(&self, css: &str) {
        self.find(css).await.click().await.unwrap();
    }

    /// Runs `js` in the page and gives what it returns.
    async fn script(&self, js: &str) -> serde_json::Value {
        self.client.execute(js, vec![]).await.unwrap()
    }

    /// Waits for the action under way to end, then reads what the page said.
    async fn said(&self) -> Said {
        self.until("the page said something", || async {
            let busy = self
                .script("return document.getElementById('content').getAttribute('aria-busy')")
                .await;
            if busy == json!("true") {
                return None;
            }
            let error = self.text("#error").await;
            if !error.is_empty() {
                assert!(
                    !error.trim_start().starts_with('{') && !error.contains("\"code\""),
                    "an error shown as raw JSON: {error}"
                );
                return Some(Err(error));
            }
            let status = self.text("#status").await;
            (!status.is_empty()).then_some(Ok(status))
        })
        .await
    }

    /// Polls `check` until it gives a value.
    async fn until<T, F, Fut>(&self, what: &str, mut check: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        let deadline = Instant::now() + STEP;
        loop {
            if let Some(value) = check().await {
                return value;
            }
            assert!(Instant::now() < deadline, "{what}");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Does `act`, then reads what the page said, until it is no refusal: one
    /// that mentions `pending` (the service waits a moment for Cognito or the
    /// sync) is tried again a second later, as a person would. Gives what the
    /// page said.
    async fn until_done(&self, what: &str, pending: &str, act: impl AsyncFn() -> Option<()>) -> String {
        self.until(what, || async {
            act().await?;
            match self.said().await {
                Ok(said) => Some(said),
                Err(refused) => {
                    assert!(refused.contains(pending), "{refused}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    None
                }
            }
        })
        .await
    }

    /// The list item of `address` on the settings page.
    fn row(address: &str) -> String {
        format!("//li[.//span[@class='email-address' and text()='{address}']]")
    }

    async fn in_row(&self, address: &str, css: &str) -> Element {
        let row = self
            .client
            .wait()
            .at_most(STEP)
            .for_element(Locator::XPath(&Self::row(address)))
            .await
            .unwrap_or_else(|err| panic!("no row for the address: {err}"));
        row.find(Locator::Css(css))
            .await
            .unwrap_or_else(|err| panic!("{css} in the row: {err}"))
    }

    async fn row_text(&self, address: &str) -> Option<String> {
        let row = self.client.find(Locator::XPath(&Self::row(address))).await.ok()?;
        row.text().await.ok()
    }

    /// The newest outbox message to `to` whose subject starts with `subject`: its text.
    async fn outbox_message(&self, to: &str, subject: &str) -> String {
        let body = self.outbox_body(to, subject).await;
        body.text().await.unwrap()
    }

    /// The body of the newest outbox message to `to` whose subject starts with `subject`.
    async fn outbox_body(&self, to: &str, subject: &str) -> Element {
        self.until("the message reached the outbox page", || async {
            for message in self.client.find_all(Locator::Css("article.message")).await.ok()? {
                let recipients = message.find(Locator::Css(".to")).await.ok()?.text().await.ok()?;
                let title = message.find(Locator::Css(".subject")).await.ok()?.text().await.ok()?;
                if recipients.contains(to) && title.starts_with(subject) {
                    return message.find(Locator::Css(".body")).await.ok();
                }
            }
            None
        })
        .await
    }

    /// Switches to the window that is not one of `known`, once it has opened.
    async fn new_window(&self, known: &[&fantoccini::wd::WindowHandle]) -> fantoccini::wd::WindowHandle {
        let opened = self
            .until("a new window opened", || async {
                let windows = self.client.windows().await.ok()?;
                windows.into_iter().find(|w| !known.contains(&w))
            })
            .await;
        self.client.switch_to_window(opened.clone()).await.unwrap();
        opened
    }

    /// The access token the current tab holds.
    async fn token(&self) -> serde_json::Value {
        self.script("return sessionStorage.getItem('user-service.accessToken')")
            .await
    }
}

async fn steps(page: &mut Page) {
    let run = uuid::Uuid::new_v4().simple().to_string();
    let first = format!("tour-{}@example.com", &run[..8]);
    let second = format!("tour-{}.work@example.com", &run[..8]);

    // The page, signed out: every field has a label, and the outbox is linked.
    page.goto("/").await;
    page.until("the sign-up form shows", || async {
        page.displayed("#sign-up-form").await.then_some(())
    })
    .await;
    let unlabelled = page
        .script("return [...document.querySelectorAll('input')].filter(i => i.labels.length === 0).map(i => i.id)")
        .await;
    assert_eq!(unlabelled, json!([]), "every input has a label");
    let outbox_link = page.find("#outbox-link").await.attr("href").await.unwrap();
    assert_eq!(outbox_link.as_deref(), Some("/local/outbox"));
    page.shot("signed-out").await;

    // Sign up.
    page.type_and_enter("#sign-up-email", &first).await;
    assert_eq!(page.said().await, Ok("Your account is ready.".into()));
    assert_eq!(page.text("#signed-in-as").await, first);
    assert_eq!(page.text("#profile-version").await, "\"1\"");
    assert!(
        page.row_text(&first)
            .await
            .is_some_and(|t| t.contains("Primary") && t.contains("Verified"))
    );
    page.shot("signed-up").await;

    // Refusals read as sentences, and change nothing.
    page.type_and_enter("#new-email", "not-an-address").await;
    let refused = page.said().await.expect_err("not an address");
    assert!(refused.contains("email"), "{refused}");
    page.type_and_enter("#new-email", &first.to_uppercase()).await;
    let refused = page.said().await.expect_err("already added");
    assert!(refused.contains("already"), "{refused}");
    assert_eq!(
        page.client.find_all(Locator::Css("#emails > li")).await.unwrap().len(),
        1
    );
    page.shot("refused").await;

    // Add an address; its code is in the outbox, in another tab.
    page.type_and_enter("#new-email", &second).await;
    let said = page.said().await.expect("added");
    assert!(said.contains("code is on its way"), "{said}");
    page.in_row(&second, ".verify-code").await;
    page.shot("address-added").await;

    let settings = page.client.window().await.unwrap();
    let outbox = page.client.new_window(true).await.unwrap().handle;
    page.client.switch_to_window(outbox.clone()).await.unwrap();
    page.goto("/local/outbox").await;
    let body = page.outbox_message(&second, "Your code to verify").await;
    let code = integration_tests::moto::code_in(&body).unwrap_or_else(|| panic!("a code in the message: {body}"));
    page.shot("outbox-code").await;

    // A wrong code first: refused, with the attempts left.
    page.client.switch_to_window(settings.clone()).await.unwrap();
    let wrong = if code == "000000" { "111111" } else { "000000" };
    let field = page.in_row(&second, ".verify-code").await;
    field.send_keys(&(wrong.to_owned() + &Key::Enter)).await.unwrap();
    let refused = page.said().await.expect_err("a wrong code");
    assert!(!refused.is_empty());
    // Verify it with the right one, then make it the primary address.
    let field = page.in_row(&second, ".verify-code").await;
    field.clear().await.unwrap();
    field.send_keys(&(code + &Key::Enter)).await.unwrap();
    assert_eq!(page.said().await, Ok(format!("{second} is verified.")));
    page.shot("verified").await;

    page.in_row(&second, ".make-primary").await.click().await.unwrap();
    let said = page.said().await.expect("primary");
    assert!(
        said.starts_with(&format!("{second} is now your primary address")),
        "{said}"
    );
    assert_eq!(page.text("#primary-email").await, second);
    assert!(page.row_text(&second).await.is_some_and(|t| t.contains("Primary")));
    page.shot("primary").await;

    // The same person in a second tab (window.open shares the tab's session)
    // changes the profile; the first tab's ETag is stale now.
    page.script("window.open(location.href, 'second-tab')").await;
    page.new_window(&[&settings, &outbox]).await;
    page.until("the second tab is signed in", || async {
        (page.text("#signed-in-as").await == second).then_some(())
    })
    .await;
    page.type_and_enter("#first-name", "Ada").await;
    assert_eq!(page.said().await, Ok("Profile saved.".into()));
    page.client.close_window().await.unwrap();
    page.client.switch_to_window(settings.clone()).await.unwrap();

    page.type_and_enter("#last-name", "Lovelace").await;
    let stale = page.said().await.expect_err("a stale ETag");
    assert!(stale.contains("changed elsewhere"), "{stale}");
    let reloaded = page.find("#first-name").await.prop("value").await.unwrap();
    assert_eq!(reloaded.as_deref(), Some("Ada"), "the profile is reloaded");
    page.shot("stale-etag").await;
    page.type_and_enter("#last-name", "Lovelace").await;
    assert_eq!(page.said().await, Ok("Profile saved.".into()));

    // A name is any text, markup too (the service takes it): the page shows it
    // as text, after a reload as well, and no element comes of it.
    let markup = "<img src=x id=injected>";
    page.type_and_enter("#first-name", markup).await;
    assert_eq!(page.said().await, Ok("Profile saved.".into()));
    page.client.refresh().await.unwrap();
    let shown = page
        .until("the reloaded page shows the profile", || async {
            let value = page.find("#first-name").await.prop("value").await.ok()??;
            (!value.is_empty()).then_some(value)
        })
        .await;
    assert_eq!(shown, markup);
    let injected = page.script("return document.getElementById('injected') !== null").await;
    assert_eq!(injected, json!(false), "no element from the stored name");

    // Remove the former primary. Until the switch reaches Cognito, the service
    // refuses (SIGN_IN_ADDRESS_PENDING): a person clicks again a moment later.
    let removed = page
        .until_done("the former primary is removed", "sign", async || {
            page.in_row(&first, ".remove").await.click().await.ok()
        })
        .await;
    assert_eq!(removed, format!("{first} was removed."));
    assert!(page.row_text(&first).await.is_none());
    page.shot("old-address-removed").await;

    // The former primary got a notice; the outbox tab shows it by itself.
    page.client.switch_to_window(outbox.clone()).await.unwrap();
    let notice = page
        .outbox_message(&first, "Your primary email address was changed")
        .await;
    assert!(notice.contains("If you did not"), "{notice}");
    page.shot("outbox-notice").await;

    // Organizations: the person creates one and invites a colleague as an
    // admin; the colleague signs up, accepts with the token from the mail in
    // the outbox, and sees it; the person, signed in again, makes them an
    // owner and leaves it to them.
    page.client.switch_to_window(settings.clone()).await.unwrap();
    let colleague = format!("tour-{}.colleague@example.com", &run[..8]);
    let org_name = "Tour <b>& Co</b>";
    page.find("#org-name").await.send_keys(org_name).await.unwrap();
    page.type_and_enter("#org-slug", &format!("tour-{}", &run[..8])).await;
    let said = page.said().await.expect("created");
    assert!(said.starts_with(&format!("You created {org_name}")), "{said}");
    let orgs = page.text("#organizations").await;
    assert!(orgs.contains(org_name) && orgs.contains("owner"), "{orgs}");
    let markup = page
        .script("return document.querySelectorAll('#organizations b').length")
        .await;
    assert_eq!(markup, json!(0), "a name is text, never markup");
    page.click("#organizations .org-manage").await;
    page.until("the members show", || async {
        page.displayed("#org-manage").await.then_some(())
    })
    .await;
    let members = page.text("#members").await;
    assert!(members.contains("(you)"), "{members}");
    page.find("#invite-email").await.send_keys(&colleague).await.unwrap();
    page.script("document.getElementById('invite-role').value = 'admin'")
        .await;
    page.click("#invite-form button[type=submit]").await;
    let said = page.said().await.expect("invited");
    assert!(said.contains("is on its way"), "{said}");
    page.shot("organization-invited").await;

    page.click("#sign-out").await;
    page.type_and_enter("#sign-up-email", &colleague).await;
    assert_eq!(page.said().await, Ok("Your account is ready.".into()));
    page.client.switch_to_window(outbox.clone()).await.unwrap();
    let mail = page.outbox_message(&colleague, "Invitation to join").await;
    let token = mail
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .find(|run| run.len() == 86)
        .unwrap_or_else(|| panic!("a token in the invitation: {mail}"))
        .to_owned();
    assert!(mail.contains("as admin"), "{mail}");
    page.shot("outbox-invitation").await;
    page.client.switch_to_window(settings.clone()).await.unwrap();
    page.type_and_enter("#invitation-token", "not-a-token").await;
    let refused = page.said().await.expect_err("not a token");
    assert!(refused.contains("token"), "{refused}");
    page.type_and_enter("#invitation-token", &token).await;
    let said = page.said().await.expect("accepted");
    assert_eq!(said, format!("You joined {org_name} as admin."));
    let orgs = page.text("#organizations").await;
    assert!(orgs.contains(org_name) && orgs.contains("admin"), "{orgs}");
    page.shot("organization-joined").await;

    page.click("#sign-out").await;
    page.type_and_enter("#sign-in-email", &second).await;
    assert_eq!(page.said().await, Ok("Signed in.".into()));
    page.click("#organizations .org-manage").await;
    page.until("two members show", || async {
        let roles = page.client.find_all(Locator::Css("#members .member-role")).await.ok()?;
        (roles.len() == 2).then_some(())
    })
    .await;
    page.script(
        "const other = [...document.querySelectorAll('#members > li')].find(li => !li.textContent.includes('(you)'));
         other.querySelector('.member-role').value = 'owner';
         other.querySelector('.change-role').click();",
    )
    .await;
    let said = page.said().await.expect("made an owner");
    assert!(said.ends_with("is now owner."), "{said}");
    page.click("#organizations .org-leave").await;
    let said = page.said().await.expect("left");
    assert_eq!(said, format!("You left {org_name}."));
    assert_eq!(page.text("#organizations").await, "");
    page.shot("organization-left").await;

    // Delete the account: the button waits for the confirmation. The session
    // is now one refreshed an hour after its sign-in (as a stolen refresh
    // token gives): the page asks for a sign-in first. Cancelled, nothing
    // happens and the session stays; confirmed, the deletion goes through.
    page.client.switch_to_window(settings).await.unwrap();
    page.old_session(&second, 3600).await;
    assert!(!page.find("#delete-button").await.is_enabled().await.unwrap());
    page.click("#delete-confirm").await;
    page.click("#delete-button").await;
    page.until("the page asks for a sign-in", || async {
        page.displayed("#reauth").await.then_some(())
    })
    .await;
    page.shot("sign-in-again").await;
    page.click("#reauth-cancel").await;
    let refused = page.said().await.expect_err("cancelled");
    assert!(refused.starts_with("Nothing was changed"), "{refused}");
    assert!(page.displayed("#delete-button").await, "still signed in");
    page.click("#delete-button").await;
    page.until("the page asks again", || async {
        page.displayed("#reauth").await.then_some(())
    })
    .await;
    page.click("#reauth-confirm").await;
    let said = page.said().await.expect("deleted");
    assert!(said.starts_with("Your account was deleted"), "{said}");
    assert!(page.displayed("#sign-in-form").await);
    page.shot("deleted").await;

    // And it stays deleted: signing in again is refused, in words.
    page.type_and_enter("#sign-in-email", &second).await;
    let refused = page.said().await.expect_err("a deleted account signs in");
    assert!(!refused.is_empty());
    assert_eq!(page.token().await, json!(null), "no session for a deleted account");
    assert!(page.displayed("#sign-in-form").await);
    page.shot("deleted-stays-deleted").await;

    takeover::taken_and_taken_back(page, &run[..8], &outbox).await;
}
