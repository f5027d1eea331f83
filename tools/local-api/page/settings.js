// The settings page: the reference client of user-service's HTTP API.
//
// It shows a frontend team what a client of this API does:
// - every request carries the caller's Cognito *access* token as a Bearer token;
// - a change to the profile sends the ETag it read as If-Match, and a stale one
//   (412 VERSION_MISMATCH) reloads the profile instead of overwriting someone's change;
// - an error is an RFC 9457 problem: the client branches on `code` and shows
//   `detail` (or `title`), never the raw body; API Gateway's own answers
//   (no token, throttled) are `{"message"}` and read as such;
// - a session older than the account's recovery answers 401 SESSION_REVOKED:
//   the page ends it, like any other 401, and says why;
// - a change that can hand the account over (switching the primary, removing an
//   address, deleting the account) may answer 401 REAUTHENTICATION_REQUIRED
//   (RFC 9470's step-up challenge): the page asks the user to sign in again,
//   then retries the change, instead of ending the session as on other 401s;
// - nothing from the API is ever put into the page as HTML (textContent only).
//
// Only `localCognito` is make dev's own: a deployed page gets its token from
// Cognito instead (see the README, "Your own page against a deployed stack").
"use strict";

// Where the HTTP API is: this origin, unless the page names another.
const API = (document.querySelector('meta[name="api-base"]')?.content ?? "").replace(/\/+$/, "");
// sessionStorage: the token lives as long as the tab (and the tabs it opens),
// and no other site reads it.
const TOKEN_KEY = "user-service.accessToken";

const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------------
// Sign-up and sign-in: make dev's local Cognito (POST /local/sign-up, /local/token).
// In a deployed stack this is Cognito's own sign-in: the stack's app client
// allows SRP, so Amplify Auth's signUp, confirmSignUp and signIn. Keep the
// access token (its `client_id` is the app client, its scope
// aws.cognito.signin.user.admin); the API refuses ID tokens.
// Each gives `{ token, passwordReset }`: `passwordReset` when the sign-in
// completed a recovered account's password reset (deployed, Cognito refuses the
// sign-in with PasswordResetRequiredException until the user chose a new
// password with the code it mails: Amplify's resetPassword, confirmResetPassword).
const localCognito = {
  signUp: (email) => localCall("/local/sign-up", { email }),
  signIn: (email) => localCall("/local/token", { email }),
};

// A recent sign-in, asked for when a change answers REAUTHENTICATION_REQUIRED:
// resolves once the user has signed in again (a new token, a new auth_time),
// rejects when they cancel. Deployed, this is Cognito's sign-in with the
// password (Amplify's signIn), not a click.
function signInAgain(err) {
  const box = $("reauth");
  $("reauth-detail").textContent = err.message;
  box.hidden = false;
  $("reauth-confirm").focus();
  return new Promise((resolve, reject) => {
    const done = () => {
      box.hidden = true;
      $("reauth-confirm").onclick = null;
      $("reauth-cancel").onclick = null;
    };
    $("reauth-confirm").onclick = async () => {
      try {
        const { token } = await localCognito.signIn($("signed-in-as").textContent);
        sessionStorage.setItem(TOKEN_KEY, token);
        done();
        resolve();
      } catch (failed) {
        done();
        reject(failed);
      }
    };
    $("reauth-cancel").onclick = () => {
      done();
      reject(new ApiError(401, "REAUTHENTICATION_REQUIRED", "Nothing was changed: the change needs a recent sign-in."));
    };
  });
}

async function localCall(path, body) {
  const { data } = await request("POST", path, { body, auth: false });
  return { token: data.token, passwordReset: data.passwordReset === true };
}

// ---------------------------------------------------------------------------
// The API.

// The answer to a request made for a session that has ended since (signed out,
// or signed in as someone else): dropped, never shown.
class Superseded extends Error {}

class ApiError extends Error {
  constructor(status, code, message, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

async function request(method, path, { body, ifMatch, auth = true } = {}) {
  const headers = { accept: "application/json, application/problem+json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (auth) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  if (ifMatch) headers["if-match"] = ifMatch;
  let response;
  try {
    response = await fetch(API + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "NETWORK", "The API did not answer. Is make dev running?");
  }
  if (auth && sessionStorage.getItem(TOKEN_KEY) !== token) throw new Superseded();
  if (!response.ok) throw await errorOf(response);
  const text = await response.text();
  return { data: text ? JSON.parse(text) : null, etag: response.headers.get("etag") };
}

async function errorOf(response) {
  const retryAfter = Number.parseInt(response.headers.get("retry-after") ?? "", 10) || null;
  let body = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON: said below by its status.
  }
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("application/problem+json") && body && typeof body.code === "string") {
    return new ApiError(response.status, body.code, body.detail || body.title, retryAfter);
  }
  // API Gateway answered itself: `{"message": "Unauthorized"}` and the like.
  if (response.status === 401) {
    return new ApiError(401, "UNAUTHORIZED", "Your session has ended. Sign in again.");
  }
  if (response.status === 429) {
    return new ApiError(429, "THROTTLED", "Too many requests right now. Try again in a moment.", retryAfter);
  }
  const said = body && typeof body.message === "string" ? `: ${body.message}` : "";
  return new ApiError(response.status, "HTTP_" + response.status, `The request failed (HTTP ${response.status}${said}).`);
}

const api = {
  profile: () => request("GET", "/me"),
  updateProfile: (changes, etag) => request("PATCH", "/me", { body: changes, ifMatch: etag }),
  deleteAccount: (etag) => request("DELETE", "/me", { ifMatch: etag }),
  emails: () => request("GET", "/me/emails"),
  addEmail: (email) => request("POST", "/me/emails", { body: { email } }),
  sendCode: (id) => request("POST", `/me/emails/${encodeURIComponent(id)}/verification`),
  verify: (id, code) => request("POST", `/me/emails/${encodeURIComponent(id)}/verify`, { body: { code } }),
  makePrimary: (id) => request("PUT", "/me/primary-email", { body: { emailId: id } }),
  removeEmail: (id) => request("DELETE", `/me/emails/${encodeURIComponent(id)}`),
  organizations: () => request("GET", "/me/organizations"),
  createOrganization: (name, slug) => request("POST", "/organizations", { body: { name, slug } }),
  members: (org) => request("GET", `/organizations/${encodeURIComponent(org)}/members`),
  setRole: (org, user, role) =>
    request("PUT", `/organizations/${encodeURIComponent(org)}/members/${encodeURIComponent(user)}/role`, { body: { role } }),
  removeMember: (org, user) =>
    request("DELETE", `/organizations/${encodeURIComponent(org)}/members/${encodeURIComponent(user)}`),
  invite: (org, email, role) =>
    request("POST", `/organizations/${encodeURIComponent(org)}/invitations`, { body: { email, role } }),
  accept: (token) => request("POST", "/invitations/accept", { body: { token } }),
};

// ---------------------------------------------------------------------------
// The page.

// The profile's ETag as last read: the next change's If-Match.
let etag = null;

function say(text) {
  $("error").textContent = "";
  $("status").textContent = text;
}

function fail(err) {
  $("status").textContent = "";
  const wait = err.retryAfter ? ` Try again in ${err.retryAfter} s.` : "";
  $("error").textContent = (err instanceof ApiError ? err.message : "Something went wrong in the page.") + wait;
  $("error").focus();
  if (!(err instanceof ApiError)) console.error(err);
}

// Runs one user action: its buttons off while it runs, its outcome said once.
async function act(form, work) {
  const buttons = form ? [...form.querySelectorAll("button")] : [];
  buttons.forEach((b) => (b.disabled = true));
  $("content").setAttribute("aria-busy", "true");
  $("error").textContent = "";
  $("status").textContent = "";
  try {
    let done;
    try {
      done = await work();
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "REAUTHENTICATION_REQUIRED")) throw err;
      // The session is fine but its sign-in is old: sign in again, retry once.
      await signInAgain(err);
      done = await work();
    }
    if (done) say(done);
  } catch (err) {
    if (err instanceof Superseded) return;
    // No valid token (API Gateway's 401 or a function's UNAUTHENTICATED): sign in again.
    if (err instanceof ApiError && err.status === 401 && err.code !== "REAUTHENTICATION_REQUIRED") signOut();
    fail(err);
  } finally {
    buttons.forEach((b) => (b.disabled = false));
    $("delete-button").disabled = !$("delete-confirm").checked;
    $("content").setAttribute("aria-busy", "false");
  }
}

function show(signedIn) {
  $("loading").hidden = true;
  $("signed-in").hidden = !signedIn;
  $("signed-out").hidden = signedIn;
}

// Forgets the session and everything shown of it.
function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  $("reauth").hidden = true;
  etag = null;
  for (const id of ["first-name", "last-name", "phone", "new-email", "org-name", "org-slug", "invitation-token", "invite-email"]) $(id).value = "";
  for (const id of ["primary-email", "signed-in-as", "profile-version"]) $(id).textContent = "";
  $("emails").replaceChildren();
  $("organizations").replaceChildren();
  hideManage();
  $("delete-confirm").checked = false;
  show(false);
  $("page-title").focus();
}

async function signedIn(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
  try {
    await load();
  } catch (err) {
    if (!(err instanceof Superseded)) signOut();
    throw err;
  }
  show(true);
  $("page-title").focus();
}

// The profile (with its ETag), the addresses and the organizations, read side by side.
async function load() {
  const [profile, emails, orgs] = await Promise.all([api.profile(), api.emails(), api.organizations()]);
  showProfile(profile.data, profile.etag);
  showEmails(emails.data.emails);
  showOrganizations(orgs.data.organizations);
}

function showProfile(profile, newEtag) {
  etag = newEtag;
  $("first-name").value = profile.firstName ?? "";
  $("last-name").value = profile.lastName ?? "";
  $("phone").value = profile.phone ?? "";
  $("primary-email").textContent = profile.email ?? "";
  $("signed-in-as").textContent = profile.email ?? "";
  $("profile-version").textContent = newEtag ?? "";
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : "");

function element(tag, attributes = {}, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function showEmails(emails) {
  const list = $("emails");
  list.replaceChildren();
  for (const email of emails) {
    const item = element("li", { "data-email-id": email.emailId });
    const line = element("div");
    line.append(element("span", { class: "email-address" }, email.email));
    if (email.isPrimary) line.append(element("span", { class: "badge badge-primary" }, "Primary"));
    line.append(
      email.isVerified
        ? element("span", { class: "badge badge-verified" }, "Verified")
        : element("span", { class: "badge badge-unverified" }, "Not verified"),
    );
    item.append(line);
    const meta = email.isVerified ? `Verified ${when(email.verifiedAt)}` : `Added ${when(email.createdAt)}`;
    item.append(element("div", { class: "meta" }, meta));

    if (!email.isVerified) item.append(verifyForm(email));
    const actions = element("div");
    if (email.isVerified && !email.isPrimary) {
      const primary = element("button", { type: "button", class: "make-primary", "aria-label": `Make primary: ${email.email}` }, "Make primary");
      primary.addEventListener("click", () =>
        act(item, async () => {
          const { data, etag: next } = await api.makePrimary(email.emailId);
          showProfile(data, next);
          showEmails((await api.emails()).data.emails);
          $("emails-title").focus();
          return `${email.email} is now your primary address. A notice went to the former one.`;
        }),
      );
      actions.append(primary);
    }
    if (!email.isPrimary) {
      const remove = element("button", { type: "button", class: "remove secondary", "aria-label": `Remove: ${email.email}` }, "Remove");
      remove.addEventListener("click", () =>
        act(item, async () => {
          await api.removeEmail(email.emailId);
          showEmails((await api.emails()).data.emails);
          $("emails-title").focus();
          return `${email.email} was removed.`;
        }),
      );
      actions.append(remove);
    }
    if (actions.childElementCount) item.append(actions);
    list.append(item);
  }
}

function verifyForm(email) {
  const form = element("form", { class: "verify-form", novalidate: "" });
  const id = `code-${email.emailId}`;
  form.append(element("label", { for: id }, `Code sent to ${email.email}`));
  const input = element("input", {
    id,
    class: "code verify-code",
    name: "code",
    inputmode: "numeric",
    autocomplete: "one-time-code",
    maxlength: "6",
    required: "",
  });
  form.append(input);
  form.append(element("button", { type: "submit" }, "Verify"));
  const resend = element("button", { type: "button", class: "resend secondary", "aria-label": `Send a new code: ${email.email}` }, "Send a new code");
  form.append(resend);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(form, async () => {
      await api.verify(email.emailId, input.value.trim());
      showEmails((await api.emails()).data.emails);
      $("emails-title").focus();
      return `${email.email} is verified.`;
    });
  });
  resend.addEventListener("click", () =>
    act(form, async () => {
      await api.sendCode(email.emailId);
      return `A new code is on its way to ${email.email}: see the outbox.`;
    }),
  );
  return form;
}


// ---------------------------------------------------------------------------
// Organizations: the caller's, with their role; owners and admins manage one
// (its members, their roles, invitations). Every power is the table's: the
// page offers what the role allows, and the API decides.

// The caller's sub, from their access token's payload (for "you" among members).
function mySub() {
  try {
    const payload = sessionStorage.getItem(TOKEN_KEY).split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload)).sub;
  } catch {
    return null;
  }
}

// The organization being managed: `{ orgId, name }`, or null.
let managed = null;

function hideManage() {
  managed = null;
  $("org-manage").hidden = true;
  $("members").replaceChildren();
}

async function reloadOrganizations() {
  showOrganizations((await api.organizations()).data.organizations);
}

function showOrganizations(orgs) {
  const list = $("organizations");
  list.replaceChildren();
  for (const org of orgs) {
    const item = element("li", { "data-org-id": org.orgId });
    const line = element("div");
    line.append(element("span", { class: "org-name" }, org.name));
    line.append(element("span", { class: "badge" }, org.role));
    item.append(line);
    item.append(element("div", { class: "meta" }, `${org.slug} · joined ${when(org.joinedAt)}`));
    const actions = element("div");
    if (org.role === "owner" || org.role === "admin") {
      const manage = element("button", { type: "button", class: "org-manage secondary", "aria-label": `Members of ${org.name}` }, "Members");
      manage.addEventListener("click", () => act(item, () => openManage(org)));
      actions.append(manage);
    }
    const leave = element("button", { type: "button", class: "org-leave secondary", "aria-label": `Leave ${org.name}` }, "Leave");
    leave.addEventListener("click", () =>
      act(item, async () => {
        await api.removeMember(org.orgId, mySub());
        if (managed?.orgId === org.orgId) hideManage();
        await reloadOrganizations();
        $("orgs-title").focus();
        return `You left ${org.name}.`;
      }),
    );
    actions.append(leave);
    item.append(actions);
    list.append(item);
  }
  if (managed && !orgs.some((o) => o.orgId === managed.orgId)) hideManage();
}

async function openManage(org) {
  managed = { orgId: org.orgId, name: org.name };
  $("org-manage-title").textContent = `Members of ${org.name}`;
  await showMembers();
  $("org-manage").hidden = false;
  $("org-manage-title").focus();
}

async function showMembers() {
  const { data } = await api.members(managed.orgId);
  const me = mySub();
  const list = $("members");
  list.replaceChildren();
  for (const member of data.members) {
    const item = element("li", { "data-member": member.userId });
    const who = member.userId === me ? `${member.userId} (you)` : member.userId;
    item.append(element("div", {}, who));
    const id = `role-${member.userId}`;
    const form = element("form", { class: "role-form", novalidate: "" });
    form.append(element("label", { for: id }, "Role"));
    const select = element("select", { id, class: "member-role" });
    for (const role of ["owner", "admin", "member"]) {
      const option = element("option", { value: role }, role);
      if (role === member.role) option.selected = true;
      select.append(option);
    }
    form.append(select);
    form.append(element("button", { type: "submit", class: "change-role" }, "Change role"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      act(form, async () => {
        await api.setRole(managed.orgId, member.userId, select.value);
        await showMembers();
        return `${who} is now ${select.value}.`;
      });
    });
    item.append(form);
    list.append(item);
  }
}

// A write pinned to the ETag this page read. When someone changed the profile
// since (412 VERSION_MISMATCH), the page shows their change rather than
// overwriting it, and the person decides again.
async function unlessStale(write) {
  try {
    return await write;
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "VERSION_MISMATCH") throw err;
    const { data, etag: next } = await api.profile();
    showProfile(data, next);
    throw new ApiError(
      412,
      err.code,
      "Your profile was changed elsewhere (another tab or device) since this page loaded it. " +
        "It has been reloaded with that change: make yours again.",
    );
  }
}

// A field left empty: a name stays as it is (names cannot be removed), the phone goes.
function profileChanges() {
  const changes = {};
  const first = $("first-name").value.trim();
  const last = $("last-name").value.trim();
  if (first) changes.firstName = first;
  if (last) changes.lastName = last;
  changes.phone = $("phone").value.trim() || null;
  return changes;
}

function wire() {
  $("sign-up-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(event.target, async () => {
      await signedIn((await localCognito.signUp($("sign-up-email").value.trim())).token);
      return "Your account is ready.";
    });
  });
  $("sign-in-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(event.target, async () => {
      const { token, passwordReset } = await localCognito.signIn($("sign-in-email").value.trim());
      await signedIn(token);
      return passwordReset
        ? "Signed in. Your account was recovered: a deployed stack asks you to choose a new password " +
            "first (make dev has no passwords). Check your addresses below."
        : "Signed in.";
    });
  });
  $("sign-out").addEventListener("click", () => {
    signOut();
    say("Signed out.");
  });
  $("profile-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(event.target, async () => {
      const { data, etag: next } = await unlessStale(api.updateProfile(profileChanges(), etag));
      showProfile(data, next);
      return "Profile saved.";
    });
  });
  $("add-email-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(event.target, async () => {
      const { data } = await api.addEmail($("new-email").value.trim());
      $("new-email").value = "";
      showEmails((await api.emails()).data.emails);
      document.getElementById(`code-${data.emailId}`)?.focus();
      return `A code is on its way to ${data.email}: open the outbox, then enter it below the address.`;
    });
  });
  $("create-org-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(event.target, async () => {
      const { data } = await api.createOrganization($("org-name").value.trim(), $("org-slug").value.trim());
      $("org-name").value = "";
      $("org-slug").value = "";
      await reloadOrganizations();
      return `You created ${data.name}: you are its owner.`;
    });
  });
  $("accept-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(event.target, async () => {
      const { data } = await api.accept($("invitation-token").value.trim());
      $("invitation-token").value = "";
      const orgs = (await api.organizations()).data.organizations;
      showOrganizations(orgs);
      const joined = orgs.find((o) => o.orgId === data.orgId);
      return `You joined ${joined ? joined.name : "the organization"} as ${data.role}.`;
    });
  });
  $("invite-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(event.target, async () => {
      const email = $("invite-email").value.trim();
      const { data } = await api.invite(managed.orgId, email, $("invite-role").value);
      $("invite-email").value = "";
      return `An invitation to join ${managed.name} as ${data.role} is on its way to ${data.email}: see the outbox.`;
    });
  });
  $("delete-confirm").addEventListener("change", () => {
    $("delete-button").disabled = !$("delete-confirm").checked;
  });
  $("delete-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!$("delete-confirm").checked) return;
    act(event.target, async () => {
      await unlessStale(api.deleteAccount(etag));
      $("delete-confirm").checked = false;
      signOut();
      return "Your account was deleted: every address is released and your profile erased.";
    });
  });
}

wire();
if (sessionStorage.getItem(TOKEN_KEY)) {
  // A reload keeps the tab's session; a token that no longer works is dropped.
  act(null, () => signedIn(sessionStorage.getItem(TOKEN_KEY)));
} else {
  show(false);
}
