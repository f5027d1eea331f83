// The outbox page of `make dev` (GET /local/outbox in a browser): the mail the
// functions sent through moto's SES, newest first, as the local API's outbox
// lists it (tools/local-api/src/outbox.rs). It asks for the JSON list every two
// seconds and changes the page only when the list (or the filter) changed, so
// focus, selection and scroll stay where they are. The DOM is built with
// textContent alone: a message's words are data, never markup. Links in a
// message (a recovery link) are anchors one can follow.
"use strict";

(() => {
  const POLL_MS = 2000;

  const list = document.getElementById("outbox-messages");
  const empty = document.getElementById("outbox-empty");
  const status = document.getElementById("outbox-status");
  const filter = document.getElementById("outbox-filter");

  /** The messages of the last answer, newest first. */
  let messages = [];
  /** Whether the last request got an answer. */
  let answering = true;
  /** What the page shows now: the filter and the ids, in order. */
  let shown = null;

  /** An element with a class and its text. */
  function element(name, className, text) {
    const node = document.createElement(name);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** A term and its description in the message's details. */
  function detail(list, term, description) {
    list.append(element("dt", "", term), description);
  }

  /** The time as this browser writes it, to the second. */
  function readable(iso) {
    const date = new Date(iso);
    return Number.isNaN(date.getTime())
      ? iso
      : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
  }

  /** http(s) links in a message's text, such as a recovery link. */
  const LINK = /https?:\/\/[^\s<>"]+/g;

  /**
   * The text as nodes, its links as anchors (text nodes and textContent only:
   * a message is data). A link opens in a tab of its own, without a Referer,
   * so the outbox stays open and a recovery token (in the fragment) goes nowhere else.
   */
  function linked(text) {
    const nodes = [];
    let at = 0;
    for (const match of text.matchAll(LINK)) {
      // A sentence's closing punctuation is not part of the link.
      const url = match[0].replace(/[.,;:!?)]+$/, "");
      nodes.push(document.createTextNode(text.slice(at, match.index)));
      const anchor = element("a", "link", url);
      anchor.href = url;
      anchor.target = "_blank";
      anchor.rel = "noopener noreferrer";
      nodes.push(anchor);
      at = match.index + url.length;
    }
    nodes.push(document.createTextNode(text.slice(at)));
    return nodes;
  }

  /** One message: subject, recipients, sender, time and the body as plain text. */
  function article(message) {
    const node = element("article", "message");
    node.dataset.messageId = message.id;
    const headingId = `message-${message.id}-subject`;
    node.setAttribute("aria-labelledby", headingId);

    const subject = element("h2", "subject", message.subject || "(no subject)");
    subject.id = headingId;

    const details = element("dl", "meta");
    detail(details, "To", element("dd", "to", (message.to || []).join(", ")));
    detail(details, "From", element("dd", "from", message.from || ""));
    const time = element("time", "sent-at", readable(message.sentAt));
    time.dateTime = message.sentAt;
    time.title = `${message.sentAt}: when the outbox saw it`;
    const when = element("dd", "");
    when.append(time);
    detail(details, "Seen", when);

    const body = element("pre", "body");
    body.append(...linked(message.text || ""));
    node.append(subject, details, body);
    return node;
  }

  /** The filter as typed, compared in lower case. */
  function wanted() {
    return filter.value.trim().toLowerCase();
  }

  function matches(message, term) {
    return !term || (message.to || []).some((to) => to.toLowerCase().includes(term));
  }

  /** Brings the page in line with `messages` and the filter, touching only what changed. */
  function render() {
    const term = wanted();
    const visible = messages.filter((m) => matches(m, term));
    const signature = JSON.stringify([term, answering, messages.length, visible.map((m) => m.id)]);
    if (signature === shown) return;
    shown = signature;

    // Existing articles are kept (a message never changes), new ones built;
    // nothing that stays is re-created or moved.
    const existing = new Map();
    for (const node of list.children) existing.set(node.dataset.messageId, node);
    let cursor = list.firstElementChild;
    for (const message of visible) {
      const node = existing.get(message.id) || article(message);
      if (node === cursor) {
        cursor = cursor.nextElementSibling;
      } else {
        list.insertBefore(node, cursor);
      }
    }
    while (cursor) {
      const next = cursor.nextElementSibling;
      cursor.remove();
      cursor = next;
    }

    empty.hidden = visible.length > 0;
    empty.textContent = messages.length === 0 ? "No mail yet." : `No mail to an address containing “${term}”.`;
    const count = (n) => `${n} message${n === 1 ? "" : "s"}`;
    const counted = term ? `${visible.length} of ${count(messages.length)}` : count(messages.length);
    status.textContent = answering
      ? `${counted}, newest first.`
      : `${counted}. The outbox is not answering: is make dev still running? Trying again every ${POLL_MS / 1000} seconds.`;
  }

  async function refresh() {
    try {
      const response = await fetch("/local/outbox", {
        headers: { Accept: "application/json" },
        cache: "no-store",
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const answer = await response.json();
      messages = Array.isArray(answer.messages) ? answer.messages : [];
      answering = true;
    } catch {
      answering = false;
    }
    render();
  }

  async function poll() {
    await refresh();
    setTimeout(poll, POLL_MS);
  }

  // `/local/outbox?to=ada%40example.com` opens with the filter set; typing keeps
  // the address bar in step, so a reload shows the same.
  filter.value = new URLSearchParams(window.location.search).get("to") || "";
  filter.addEventListener("input", () => {
    const url = new URL(window.location.href);
    if (filter.value.trim()) url.searchParams.set("to", filter.value.trim());
    else url.searchParams.delete("to");
    window.history.replaceState(null, "", url);
    render();
  });
  poll();
})();
