"""Generate the long-technical-conversation recall set (docs/DECISIONS.md,
docs/issues.md#issue-40-item-3).

Each conversation is one agent's store: a user and an assistant working on one
project over many dated sessions. The assistant's turns explain and quote functions
of permissively licensed packages installed in this checkout's ``.venv`` (their
docstrings and source, read with ``ast``); the user's turns ask about them and, now
and then, state project facts, instructions and preferences, or report events. Every
turn is cut into memories of at most ``MAX_CHARS`` characters (at line breaks, then
at spaces), as an agent that saves a long conversation would.

Questions come in the ten kinds of the held-back long-conversation benchmark, each
with the ids of the memories that answer it (``abstention``: none). Slot values
(service names, ports, regions, instructions...) are drawn per conversation from
pools, and every question kind has several phrasings, so the rules are not tuned to
one sentence.

Output, in the format of the LoCoMo-derived recall-eval data (so
``scripts/recall_benchmark.load_benchmark`` reads it):

- ``memories.jsonl``: ``{conv, id, text, date, speaker, session}``;
- ``queries.jsonl``: ``{conv, id, question, category, category_name, evidence_ids,
  split}`` (``split``: ``tune`` or ``held-out``, by conversation);
- ``SOURCES.txt``: each package used, its version and licence (from its metadata).

Deterministic: the same ``--seed`` and the same installed packages give the same
files. Usage::

    .venv/bin/python bench/longtech_generate.py [--out bench/data/longtech] [--seed 40]
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "bench" / "data" / "longtech"
MAX_CHARS = 480

# Distribution name -> import package; every one is MIT, BSD or Apache-2.0 licensed
# (checked against its metadata when generating: ``licence``).
PACKAGES = {
    "requests": "requests",
    "click": "click",
    "flask": "flask",
    "jinja2": "jinja2",
    "httpx": "httpx",
    "attrs": "attr",
    "jsonschema": "jsonschema",
    "pyyaml": "yaml",
    "python-dateutil": "dateutil",
    "tenacity": "tenacity",
    "starlette": "starlette",
    "rich": "rich",
    "pluggy": "pluggy",
    "packaging": "packaging",
    "sortedcontainers": "sortedcontainers",
    "itsdangerous": "itsdangerous",
    "markdown-it-py": "markdown_it",
    "boto3": "boto3",
    "jmespath": "jmespath",
    "python-dotenv": "dotenv",
}
ALLOWED = ("MIT", "BSD", "Apache")

CONVERSATIONS = 4
HELD_OUT = frozenset({1, 3})
"""Conversation numbers whose questions are never looked at while tuning."""

CATEGORIES = (
    "information_extraction",
    "multi_session_reasoning",
    "knowledge_update",
    "temporal_reasoning",
    "event_ordering",
    "contradiction_resolution",
    "instruction_following",
    "preference_following",
    "summarization",
    "abstention",
)

SERVICES = [
    "billing-api", "ingest-worker", "report-builder", "auth-gateway", "search-indexer",
    "notification-hub", "inventory-sync", "export-service", "webhook-relay", "metrics-agent",
    "invoice-renderer", "catalog-api", "upload-proxy", "ledger-service", "scheduler-daemon",
]  # fmt: skip
DATABASES = ["PostgreSQL 15", "MySQL 8", "DynamoDB", "SQLite", "MongoDB 7", "Redis 7"]
PLATFORMS = [
    ("ECS Fargate", "eu-west-1"), ("Kubernetes on GKE", "europe-west4"),
    ("AWS Lambda", "us-east-2"), ("a Hetzner VM", "Falkenstein"),
    ("Fly.io", "ams"), ("Azure Container Apps", "westeurope"),
]  # fmt: skip
EVENTS = [
    ("migrated the {service} database to {db}", "the database migration"),
    ("shipped release {version} of {service}", "the {version} release"),
    ("rotated the API keys of {service}", "the key rotation"),
    ("switched {service} to structured JSON logging", "the logging switch"),
    ("added a retry with exponential backoff to the {service} client", "adding the retries"),
    ("moved the CI pipeline of {service} to GitHub Actions", "the CI move"),
    ("turned on the nightly backup of {service}", "the nightly backup"),
    ("split the {service} monolith into two workers", "the worker split"),
    ("upgraded {service} to Python 3.12", "the Python upgrade"),
    ("put a rate limiter in front of {service}", "adding the rate limiter"),
]
INSTRUCTIONS = [
    ("always add type hints to every function signature", "type hints"),
    ("use pathlib instead of os.path for file paths", "pathlib"),
    ("write Google-style docstrings on public functions", "docstrings"),
    ("never use print for diagnostics, use the logging module", "logging"),
    ("keep functions under 40 lines and split them otherwise", "short functions"),
    ("put constants in UPPER_CASE at the top of the module", "constants"),
    ("raise specific exception classes, never a bare Exception", "exceptions"),
    ("format code with black and a line length of 100", "formatting"),
]
TASKS = [
    "write a helper that reads the settings file and returns a dict",
    "add a function that retries a failed HTTP call",
    "write a small module that parses the CSV export",
    "implement a function to validate incoming webhook payloads",
    "write code that walks the upload folder and lists the images",
    "add a command that prints the current queue length",
]
PREFERENCES = [
    ("testing", "pytest", "unittest",
     "How should I write the tests for the new {module} module?"),
    ("HTTP client", "httpx", "requests",
     "Which HTTP client should the {module} code call the partner API with?"),
    ("configuration", "environment variables", "YAML files",
     "Where should the {module} settings live?"),
    ("CLI", "click", "argparse", "Build a command-line entry point for {module}."),
    ("date handling", "python-dateutil", "hand-written strptime formats",
     "Parse the timestamps coming from the {module} feed."),
    ("data classes", "attrs", "plain dicts", "Model the records that {module} passes around."),
    ("templates", "Jinja2", "f-strings", "Render the {module} notification e-mails."),
]  # fmt: skip
MODULES = ["pricing", "sync", "exporter", "audit", "reminders", "onboarding", "quota", "tagging"]
CONTRADICTIONS = [
    ("{service} must never log request bodies, they contain customer data",
     "turn on request body logging in {service} for this week, we need it to debug the 400s",
     "Does {service} log request bodies?"),
    ("{service} only ever talks to the database through the repository layer",
     "{service} now runs raw SQL in the report endpoint, skipping the repository layer",
     "Does {service} bypass its repository layer anywhere?"),
    ("we do not cache anything in {service}, every read hits the source",
     "we added a 5 minute cache on the product lookups in {service}",
     "Is there any caching in {service}?"),
    ("{service} is single-tenant, one deployment per customer",
     "{service} now serves several customers from one deployment with a tenant column",
     "Is {service} multi-tenant?"),
]  # fmt: skip
ABSENT_TOPICS = [
    "the Kafka consumer lag alert", "the GraphQL schema stitching", "the Terraform state lock",
    "the iOS push certificate", "the Elasticsearch shard count", "the Stripe tax settings",
    "the SAML single sign-on metadata", "the Grafana dashboard for disk usage",
    "the Helm chart values for the ingress", "the BigQuery export schedule",
    "the Android release signing key", "the load balancer's TLS cipher list",
]  # fmt: skip
USER_OPENERS = [
    "Can you explain how {words} works in {package}? I am reading `{qualname}`.",
    "I keep hitting issues around `{name}` from {package}. What does it actually do?",
    "How should I use {package}'s {words}?",
    "Walk me through `{qualname}` please, I need it for {service}.",
    "What is the right way to call {words} ({package}) from our code?",
]
ASSISTANT_LEADS = [
    "`{qualname}` is defined in `{path}`. {summary}",
    "Here is how `{name}` works. {summary}",
    "In {package}, `{name}` lives in `{path}`. {summary}",
]
FOLLOW_UPS = [
    "Thanks. Does it raise anything I should catch?",
    "Makes sense. Can you show the source so I can see the edge cases?",
    "OK, and how would I mock that in a test?",
    "Got it, is this safe to call from several threads?",
]


@dataclass
class Function:
    """A function or method of a package, with its docstring and source."""

    package: str
    qualname: str
    path: str
    doc: str
    source: str

    @property
    def name(self) -> str:
        """The last part of the qualified name."""
        return self.qualname.rsplit(".", 1)[-1]


class Functions:
    """The functions of each package in ``PACKAGES``, read on first use."""

    def __init__(self, root: Path) -> None:
        """Read packages from ``root`` (a ``site-packages`` folder)."""
        self.root = root
        self.read: dict[str, list[Function]] = {}

    def of(self, distribution: str) -> list[Function]:
        """The package's functions (``package_functions``); its licence checked first.

        Raises:
            SystemExit: when the licence is not MIT, BSD or Apache.
        """
        if distribution not in self.read:
            declared = licence(distribution)
            if not any(word in declared for word in ALLOWED):
                raise SystemExit(f"{distribution}: licence {declared!r} is not MIT/BSD/Apache")
            found = package_functions(distribution, PACKAGES[distribution], self.root)
            self.read[distribution] = found
        return self.read[distribution]

    def enough(self, distribution: str) -> bool:
        """Whether the package has the 12 functions a conversation's sessions need."""
        return len(self.of(distribution)) >= 12

    def sources(self) -> list[str]:
        """``name version: licence (n functions)`` of each package read."""
        return [
            f"{name} {metadata.version(name)}: {licence(name)} ({len(items)} functions)"
            for name, items in sorted(self.read.items())
        ]


@dataclass
class Conversation:
    """The memories and questions of one generated conversation."""

    number: int
    memories: list[dict[str, object]] = field(default_factory=list)
    questions: list[dict[str, object]] = field(default_factory=list)
    clock: datetime = datetime(2025, 1, 6, 9, 0)
    session: int = 0


def licence(distribution: str) -> str:
    """The licence a distribution's metadata declares (expression, field or classifier)."""
    meta = metadata.metadata(distribution)
    found = [
        str(meta.get(key)).strip()
        for key in ("License-Expression", "License")
        if meta.get(key) and meta.get(key) != "UNKNOWN" and len(str(meta.get(key))) < 60
    ]
    found += [
        str(classifier.rsplit("::", 1)[-1]).strip()
        for classifier in meta.get_all("Classifier") or []
        if classifier.startswith("License ::")
    ]
    return "; ".join(dict.fromkeys(found)) or "unknown"


def package_functions(distribution: str, package: str, root: Path) -> list[Function]:
    """Functions and methods of ``package`` with a docstring of at least 80 characters
    and a source of 200 to 3,000 characters, in file and line order."""
    found: list[Function] = []
    base = root / package
    for path in sorted(base.rglob("*.py")):
        if "test" in path.parts[-1] or any(part.startswith("_vendor") for part in path.parts):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        relative = str(path.relative_to(root))
        for node, owner in _functions(tree):
            doc = ast.get_docstring(node) or ""
            source = ast.get_source_segment(text, node) or ""
            if len(doc) < 80 or not 200 <= len(source) <= 3000 or node.name.startswith("__"):
                continue
            module = relative[:-3].replace("/", ".").removesuffix(".__init__")
            qualname = ".".join(part for part in (module, owner, node.name) if part)
            found.append(Function(distribution, qualname, relative, doc, source))
    return found


def _functions(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """Top-level functions and methods of top-level classes, with the class name."""
    result: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            result.append((node, ""))
        elif isinstance(node, ast.ClassDef):
            result.extend(
                (item, node.name)
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            )
    return result


def words_of(identifier: str) -> str:
    """``parse_header_links`` / ``parseHeaderLinks`` -> ``parse header links``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", identifier.replace("_", " "))
    return " ".join(spaced.lower().split())


def chunks(text: str, limit: int = MAX_CHARS) -> list[str]:
    """Cut ``text`` into pieces of at most ``limit`` characters: whole lines where they
    fit, a long line at its last space before the limit (or hard)."""
    pieces: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:
            cut = line.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            head, line = line[:cut], line[cut:].lstrip()
            if current:
                pieces.append(current)
                current = ""
            pieces.append(head)
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) <= limit:
            current = candidate
        else:
            pieces.append(current)
            current = line
    if current.strip():
        pieces.append(current)
    return [piece for piece in (item.strip("\n") for item in pieces) if piece.strip()]


class Writer:
    """Appends turns as memories and questions to one conversation."""

    def __init__(self, conversation: Conversation, rng: random.Random) -> None:
        """Write into ``conversation`` with ``rng`` for every choice."""
        self.conversation = conversation
        self.rng = rng

    def new_session(self) -> None:
        """Start the next session 1-4 days later, at a working hour."""
        conv = self.conversation
        conv.session += 1
        day = conv.clock + timedelta(days=self.rng.randint(1, 4))
        conv.clock = day.replace(hour=self.rng.randint(8, 16), minute=self.rng.randint(0, 59))

    def turn(self, speaker: str, text: str) -> list[str]:
        """Save one turn as memories (ids returned), a minute or two after the last."""
        conv = self.conversation
        ids = []
        for piece in chunks(text):
            conv.clock += timedelta(seconds=self.rng.randint(20, 90))
            memory_id = f"lt{conv.number}-{len(conv.memories):05d}"
            conv.memories.append(
                {
                    "conv": f"lt-{conv.number}",
                    "id": memory_id,
                    "text": piece,
                    "date": conv.clock.isoformat(),
                    "speaker": speaker,
                    "session": conv.session,
                }
            )
            ids.append(memory_id)
        return ids

    def ask(self, category: str, question: str, evidence: list[str]) -> None:
        """Record one question of ``category`` with its evidence memory ids."""
        conv = self.conversation
        conv.questions.append(
            {
                "conv": f"lt-{conv.number}",
                "id": f"lt{conv.number}-q{len(conv.questions):03d}",
                "question": question,
                "category": CATEGORIES.index(category) + 1,
                "category_name": category,
                "evidence_ids": evidence,
                "split": "held-out" if conv.number in HELD_OUT else "tune",
            }
        )


def explain(writer: Writer, function: Function, service: str) -> dict[str, list[str]]:
    """One exchange about ``function``: the user's question, the assistant's answer with
    its source, a follow-up and a short reply. Returns the memory ids by part."""
    rng = writer.rng
    slots = {
        "words": words_of(function.name),
        "package": function.package,
        "qualname": function.qualname,
        "name": function.name,
        "path": function.path,
        "service": service,
    }
    question = writer.turn("user", rng.choice(USER_OPENERS).format(**slots))
    paragraphs = [part.strip() for part in function.doc.split("\n\n") if part.strip()]
    summary = " ".join(paragraphs[0].split())
    lead = rng.choice(ASSISTANT_LEADS).format(summary=summary, **slots)
    details = "\n\n".join(paragraphs[1:8])
    answer = writer.turn("assistant", f"{lead}\n\n{details}".strip())
    follow = writer.turn("user", rng.choice(FOLLOW_UPS)) if rng.random() < 0.2 else []
    code = writer.turn("assistant", f"Here is the source:\n\n```python\n{function.source}\n```")
    return {"question": question, "answer": answer, "follow": follow, "code": code}


def generate(number: int, functions: Functions, seed: int) -> Conversation:
    """One conversation: ``8-11`` sessions over five packages, with planted facts."""
    rng = random.Random(seed * 1000 + number)
    conversation = Conversation(number)
    writer = Writer(conversation, rng)
    packages = [
        name for name in rng.sample(sorted(PACKAGES), len(PACKAGES)) if functions.enough(name)
    ]
    packages = packages[:5]
    service, other = rng.sample(SERVICES, 2)
    sessions = rng.randint(8, 11)
    plan = _plan(rng, sessions)
    explained: list[tuple[Function, dict[str, list[str]], int]] = []
    by_package: dict[str, list[str]] = {name: [] for name in packages}
    planted: dict[str, list[str]] = {}
    slots = _slots(rng, service, other)
    for session in range(sessions):
        writer.new_session()
        package = packages[session % len(packages)]
        for function in rng.sample(functions.of(package), rng.randint(3, 6)):
            ids = explain(writer, function, service)
            explained.append((function, ids, session))
            by_package[package].extend(ids["question"] + ids["answer"][:1])
        for kind in plan.get(session, []):
            planted[kind] = writer.turn("user", _planted_text(kind, slots, rng))
    _questions(writer, slots, planted, explained, by_package)
    return conversation


def _slots(rng: random.Random, service: str, other: str) -> dict[str, str]:
    """The conversation's slot values."""
    platform, region = rng.choice(PLATFORMS)
    first_db, second_db = rng.sample(DATABASES, 2)
    events = rng.sample(range(len(EVENTS)), 3)
    instruction = rng.randrange(len(INSTRUCTIONS))
    preference = rng.randrange(len(PREFERENCES))
    contradiction = rng.randrange(len(CONTRADICTIONS))
    ports = rng.sample([8000, 8080, 8443, 9000, 9090, 5000, 3000, 7070], 2)
    version = f"{rng.randint(1, 4)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}"
    values = {
        "service": service,
        "other": other,
        "platform": platform,
        "region": region,
        "db": first_db,
        "new_db": second_db,
        "port": str(ports[0]),
        "new_port": str(ports[1]),
        "version": version,
        "module": rng.choice(MODULES),
        "task": rng.choice(TASKS),
        "absent": "|".join(rng.sample(ABSENT_TOPICS, 3)),
    }
    for index, event in enumerate(events):
        values[f"event{index}"] = str(event)
    values["instruction"] = str(instruction)
    values["preference"] = str(preference)
    values["contradiction"] = str(contradiction)
    return values


PLANTED = (
    "database", "platform", "port", "new_port", "event0", "event1", "event2",
    "instruction", "preference", "contradiction_a", "contradiction_b",
)  # fmt: skip


def _plan(rng: random.Random, sessions: int) -> dict[int, list[str]]:
    """Which session each planted fact goes in (an update after its original, events in
    order, the contradiction's second half after its first)."""
    spots = sorted(rng.choices(range(1, sessions - 1), k=len(PLANTED)))
    order = ["instruction", "database", "port", "preference", "event0", "contradiction_a"]
    order += ["platform", "event1", "new_port", "contradiction_b", "event2"]
    plan: dict[int, list[str]] = {}
    for kind, spot in zip(order, spots, strict=True):
        plan.setdefault(spot, []).append(kind)
    return plan


def _event(slots: dict[str, str], index: int) -> tuple[str, str]:
    """The planted event ``index``: its sentence and its short name."""
    text, short = EVENTS[int(slots[f"event{index}"])]
    return text.format(**{**slots, "db": slots["new_db"]}), short.format(**slots)


def _planted_text(kind: str, slots: dict[str, str], rng: random.Random) -> str:
    """The user's turn that states one planted fact."""
    service = slots["service"]
    if kind == "database":
        return rng.choice(
            [
                f"For context: {service} keeps its data in {slots['db']}, via SQLAlchemy.",
                f"Note that {service} stores everything in {slots['db']}.",
            ]
        )
    if kind == "platform":
        return rng.choice(
            [
                f"{service} runs on {slots['platform']} in {slots['region']},"
                " so cold starts matter.",
                f"We deploy {service} to {slots['platform']} ({slots['region']}).",
            ]
        )
    if kind == "port":
        return f"Locally {service} listens on port {slots['port']}, set in the compose file."
    if kind == "new_port":
        return rng.choice(
            [
                f"Heads up: we changed {service} to listen on port {slots['new_port']} now.",
                f"We moved {service} off {slots['port']};"
                f" it is on port {slots['new_port']} from today.",
            ]
        )
    if kind.startswith("event"):
        sentence, _ = _event(slots, int(kind[-1]))
        return rng.choice([f"Update: today we {sentence}.", f"Done: we {sentence} this morning."])
    if kind == "instruction":
        rule, _ = INSTRUCTIONS[int(slots["instruction"])]
        return f"One rule for everything you write for me from now on: {rule}."
    if kind == "preference":
        area, liked, disliked, _ = PREFERENCES[int(slots["preference"])]
        return f"For {area} I prefer {liked} over {disliked}, please stick to that."
    first, second, _ = CONTRADICTIONS[int(slots["contradiction"])]
    return (first if kind == "contradiction_a" else second).format(service=service) + "."


def _questions(
    writer: Writer,
    slots: dict[str, str],
    planted: dict[str, list[str]],
    explained: list[tuple[Function, dict[str, list[str]], int]],
    by_package: dict[str, list[str]],
) -> None:
    """The conversation's questions, about four of each kind (abstention: three)."""
    rng = writer.rng
    service = slots["service"]
    for function, ids, _ in rng.sample(explained, 5):
        question = rng.choice(
            [
                f"What does {words_of(function.name)} do in {function.package}?",
                f"Which file is `{function.name}` defined in?",
                f"Remind me what {function.package}'s `{function.qualname}` returns.",
                f"What did you tell me about {words_of(function.name)}?",
            ]
        )
        writer.ask("information_extraction", question, ids["answer"][:1] + ids["code"][:1])
    writer.ask(
        "multi_session_reasoning",
        rng.choice(
            [
                f"Where does {service} run and which database does it use?",
                f"Give me the deployment platform and the datastore of {service}.",
            ]
        ),
        planted["platform"] + planted["database"],
    )
    firsts = [(f, ids, s) for f, ids, s in explained]
    for _ in range(3):
        one, two = rng.sample(firsts, 2)
        if one[0].package == two[0].package:
            continue
        writer.ask(
            "multi_session_reasoning",
            f"Across our sessions, how do {words_of(one[0].name)} and"
            f" {words_of(two[0].name)} relate?",
            one[1]["answer"][:1] + two[1]["answer"][:1],
        )
    writer.ask(
        "knowledge_update",
        rng.choice(
            [
                f"Which port does {service} listen on now?",
                f"What is the current port of {service}?",
            ]
        ),
        planted["new_port"] + planted["port"],
    )
    writer.ask(
        "knowledge_update",
        f"Is {service} still on port {slots['port']}?",
        planted["new_port"] + planted["port"],
    )
    for index in range(3):
        _, short = _event(slots, index)
        writer.ask(
            "temporal_reasoning",
            rng.choice([f"When did we do {short}?", f"How long ago was {short}?"]),
            planted[f"event{index}"],
        )
    for one, two in ((0, 1), (1, 2), (0, 2)):
        _, first = _event(slots, one)
        _, second = _event(slots, two)
        pair = [first, second]
        rng.shuffle(pair)
        writer.ask(
            "event_ordering",
            rng.choice(
                [
                    f"Which came first, {pair[0]} or {pair[1]}?",
                    f"Did {pair[0]} happen before or after {pair[1]}?",
                ]
            ),
            planted[f"event{one}"] + planted[f"event{two}"],
        )
    first_session = explained[0]
    writer.ask(
        "event_ordering",
        "What was the very first thing we looked at together?",
        first_session[1]["question"],
    )
    _, _, asked = CONTRADICTIONS[int(slots["contradiction"])]
    writer.ask(
        "contradiction_resolution",
        asked.format(service=service),
        planted["contradiction_b"] + planted["contradiction_a"],
    )
    _, topic = INSTRUCTIONS[int(slots["instruction"])]
    writer.ask(
        "instruction_following",
        f"Please {slots['task']} for {service}.",
        planted["instruction"],
    )
    writer.ask(
        "instruction_following",
        f"What are my rules about {topic} in code you write?",
        planted["instruction"],
    )
    area, _, _, asked = PREFERENCES[int(slots["preference"])]
    writer.ask(
        "preference_following",
        asked.format(module=slots["module"]),
        planted["preference"],
    )
    writer.ask(
        "preference_following",
        f"What do I like to use for {area}?",
        planted["preference"],
    )
    for package in rng.sample(sorted(by_package), 2):
        writer.ask(
            "summarization",
            rng.choice(
                [
                    f"Summarize everything we covered about {package}.",
                    f"Give me a recap of our {package} discussions.",
                ]
            ),
            by_package[package],
        )
    for topic in slots["absent"].split("|"):
        writer.ask(
            "abstention",
            rng.choice(
                [
                    f"What did we decide about {topic}?",
                    f"Remind me how we configured {topic} for {service}.",
                ]
            ),
            [],
        )


def main() -> int:
    """Write the set to ``--out``; print its size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=40)
    args = parser.parse_args()
    root = Path(next(path for path in sys.path if path.endswith("site-packages")))
    functions = Functions(root)
    args.out.mkdir(parents=True, exist_ok=True)
    conversations = [generate(number, functions, args.seed) for number in range(CONVERSATIONS)]
    with (args.out / "memories.jsonl").open("w", encoding="utf-8") as out:
        for conversation in conversations:
            out.writelines(json.dumps(record) + "\n" for record in conversation.memories)
    with (args.out / "queries.jsonl").open("w", encoding="utf-8") as out:
        for conversation in conversations:
            out.writelines(json.dumps(record) + "\n" for record in conversation.questions)
    (args.out / "SOURCES.txt").write_text("\n".join(functions.sources()) + "\n", encoding="utf-8")
    for conversation in conversations:
        memories = conversation.memories
        assistant = sum(record["speaker"] == "assistant" for record in memories)
        print(
            f"lt-{conversation.number}: {len(memories)} memories"
            f" ({assistant / len(memories):.0%} assistant),"
            f" {len(conversation.questions)} questions,"
            f" {'held-out' if conversation.number in HELD_OUT else 'tune'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
