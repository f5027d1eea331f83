"""Runs the scim2-tester conformance suite against our SCIM server.

Usage: python tests/e2e/scim2_tester.py BASE_URL TOKEN DOMAIN

  BASE_URL  the organization's SCIM base URL, ending in /scim/v2
  TOKEN     one of its SCIM bearer tokens
  DOMAIN    one of its verified mail domains, e.g. scim.example

Needs the pins of tools/requirements.txt (scim2-tester, scim2-client[httpx2]).
Only what the suite sends is adapted, never what it checks: our server takes
addresses at the organization's verified domains only, and E.164 numbers.
Exits 1 when a check errs, 0 otherwise.
"""

import os
import random
import secrets
import sys
from collections import Counter
from importlib.metadata import version

# This file bears the package's name: its folder must not shadow the package.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import httpx2  # noqa: E402
import scim2_tester.checkers  # noqa: E402,F401  (loads every checker module before patching)
from scim2_client.engines.httpx2 import SyncSCIMClient  # noqa: E402
from scim2_tester import Status, check_server, filling  # noqa: E402

FAILED = {Status.ERROR, Status.CRITICAL}
# Modules that import generate_random_value by name (scim2-tester 0.5.2); the
# patch must reach each, or a PATCH check sends the stock values.
MUST_PATCH = {
    "scim2_tester.filling",
    "scim2_tester.checkers.patch_add",
    "scim2_tester.checkers.patch_replace",
}


def adapted(original, domain):
    """The stock generator, its addresses and numbers replaced by ones we accept."""

    def address():
        return f"scim2-{secrets.token_hex(6)}@{domain}"

    def phone():
        return "+1415555" + "".join(random.choices("0123456789", k=4))

    def kind(path):
        # The stock generator's own tests (filling.py), plus userName: a user
        # needs an address, and with no emails the userName is taken as one.
        binding = path.resolve()
        field = binding.target_field_name if binding else None
        owner = binding.target_model.__name__.lower() if binding and binding.target_model else ""
        urn = str(path)
        if urn == "userName" or urn.endswith(":userName"):
            return address
        if urn.endswith("emails.value") or (field == "value" and "email" in owner):
            return address
        if urn.endswith("phoneNumbers.value") or (field == "value" and "phone" in owner):
            return phone
        return None

    def generate_random_value(context, path, mutability=None, required=None):
        value = original(context, path=path, mutability=mutability, required=required)
        fresh = kind(path)
        if value is None or fresh is None:
            pass
        elif isinstance(value, list):
            value = [fresh() for _ in value]
        else:
            value = fresh()
        # A one-item list of emails or phoneNumbers made for PATCH carries a
        # random primary; whole resources get filling.fix_primary_attributes
        # (one item: primary). Same rule here: a user always has one primary
        # address and one phone, which the server shows as primary.
        if isinstance(value, list) and value and hasattr(value[0], "primary"):
            for i, item in enumerate(value):
                item.primary = i == 0
        return value

    return generate_random_value


def patch_generator(domain):
    original = filling.generate_random_value
    replacement = adapted(original, domain)
    patched = set()
    # fill_with_random_values (imported by name in resource_put and utils)
    # looks the generator up in filling's globals, so patching filling covers it.
    for name, module in list(sys.modules.items()):
        if name.startswith("scim2_tester") and getattr(module, "generate_random_value", None) is original:
            module.generate_random_value = replacement
            patched.add(name)
    missing = MUST_PATCH - patched
    if missing:
        sys.exit(f"scim2-tester changed: generate_random_value not found in {sorted(missing)}")


def one_line(text, limit=300):
    text = " | ".join(line.strip() for line in str(text or "").splitlines() if line.strip())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main(argv):
    if len(argv) != 4 or not argv[1].rstrip("/").endswith("/scim/v2"):
        sys.exit(__doc__)
    base_url, token, domain = argv[1].rstrip("/"), argv[2], argv[3].strip().lower()
    patch_generator(domain)

    http = httpx2.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    client = SyncSCIMClient(http)
    try:
        client.discover()
    except Exception as exc:  # the suite needs our /Schemas: nothing to run without it
        print(f"discovery failed: {type(exc).__name__}: {one_line(exc)}")
        return 1
    results = check_server(client, raise_exceptions=False)

    for r in results:
        print(f"{r.status.name:<10} {r.title or '?'} [{r.resource_type or '-'}] {one_line(r.reason)}")

    counts = Counter(r.status.name for r in results)
    print(f"\nscim2-tester {version('scim2-tester')}: {len(results)} results")
    for status in Status:
        if counts[status.name]:
            print(f"  {status.name:<10} {counts[status.name]}")
    skipped = [r for r in results if r.status == Status.SKIPPED]
    if skipped:
        print("skipped:")
        for r in skipped:
            print(f"  {r.title} [{r.resource_type or '-'}]: {one_line(r.reason)}")
    return 1 if any(r.status in FAILED for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
