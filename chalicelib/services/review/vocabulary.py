"""The word tables of the review's "same facts" rule (``details``): negations, stop
words and fillers, environments, synonyms, number words, units, months, weekdays."""

from __future__ import annotations

NEGATIONS = frozenset(
    {"not", "no", "never", "none", "cannot", "without", "nobody", "nothing", "neither", "nor"}
)
STOP_WORDS = frozenset(
    """a an the is are was were be been being to of in on at for and or it its this that
    these those with by as from we our you your they their them he she his her has have had
    do does did will would should can could shall may might must there here which who whom
    whose what so than then also just now currently still really ever actually please note
    always any some all each every very about roughly approximately around nearly almost
    circa approx""".split()  # noqa: SIM905
)
"""Words that are not values: function words and fillers. ``must`` / ``should`` are
here on purpose ("deploys must use the VPN" says what "deploys use the VPN" says);
"always" too; "never" is a negation; so are hedges ("about", "roughly"): "about 10
minutes" and "roughly ten minutes" give one value (docs/issues.md#issue-43-item-2)."""

ENVIRONMENTS: dict[str, str] = {
    "production": "prod",
    "prod": "prod",
    "prd": "prod",
    "live": "prod",
    "staging": "staging",
    "stage": "staging",
    "stg": "staging",
    "development": "dev",
    "dev": "dev",
    "qa": "qa",
    "uat": "uat",
    "test": "test",
    "testing": "test",
    "sandbox": "sandbox",
    "preview": "preview",
    "canary": "canary",
    "local": "local",
    "localhost": "local",
}
"""Environment names and their canonical form (an environment is a detail)."""

DETERMINERS = frozenset(
    """the a an this that these those each every our my your their its his her""".split()  # noqa: SIM905
)
"""Words after which a differing noun names what a fact is about ("by *the* API",
"*the* billing service"): a subject qualifier of ``sameness`` when each fact of a pair
has one and a differing value too."""

SYNONYMS: dict[str, str] = {
    "requires": "need",
    "require": "need",
    "required": "need",
    "needs": "need",
    "needed": "need",
    "database": "db",
    "databases": "db",
    "repository": "repo",
    "repositories": "repo",
    "repos": "repo",
    "configuration": "config",
    "configurations": "config",
    "configs": "config",
    "kubernetes": "k8s",
    "environment": "env",
    "environments": "env",
    "envs": "env",
    "utilizes": "use",
    "utilize": "use",
    "uses": "use",
    "using": "use",
    "used": "use",
    "pull request": "pr",
}
"""A small table of words that say the same thing in agent facts (canonical on the right)."""

NUMBER_WORDS: dict[str, str] = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "sixteen": "16",
    "seventeen": "17",
    "eighteen": "18",
    "nineteen": "19",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
    "hundred": "100",
    "thousand": "1000",
    "once": "1x",
    "twice": "2x",
}

UNITS: dict[str, str] = {
    **dict.fromkeys(["ms", "msec", "millisecond", "milliseconds"], "ms"),
    **dict.fromkeys(["s", "sec", "secs", "second", "seconds"], "s"),
    **dict.fromkeys(["min", "mins", "minute", "minutes"], "min"),
    **dict.fromkeys(["m"], "m"),
    **dict.fromkeys(["h", "hr", "hrs", "hour", "hours"], "h"),
    **dict.fromkeys(["d", "day", "days"], "d"),
    **dict.fromkeys(["w", "wk", "wks", "week", "weeks"], "w"),
    **dict.fromkeys(["mo", "month", "months"], "mo"),
    **dict.fromkeys(["y", "yr", "yrs", "year", "years"], "y"),
    **dict.fromkeys(["b", "byte", "bytes"], "b"),
    **dict.fromkeys(["kb", "kib"], "kb"),
    **dict.fromkeys(["mb", "mib"], "mb"),
    **dict.fromkeys(["gb", "gib", "g"], "gb"),
    **dict.fromkeys(["tb", "tib"], "tb"),
    **dict.fromkeys(["%", "percent", "pct"], "%"),
    **dict.fromkeys(["usd", "dollar", "dollars", "$"], "usd"),
    **dict.fromkeys(["eur", "euro", "euros", "€"], "eur"),
    **dict.fromkeys(["gbp", "pound", "pounds", "£"], "gbp"),
    **dict.fromkeys(["k"], "k"),
    **dict.fromkeys(["x"], "x"),
    **dict.fromkeys(["rps", "qps"], "rps"),
    **dict.fromkeys(["cpu", "cpus", "vcpu", "vcpus", "core", "cores"], "cpu"),
    **dict.fromkeys(["replica", "replicas"], "replica"),
}
"""Units and currencies and their canonical form ("30 seconds" is ``30 s``)."""

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
WEEKDAYS = {
    name: short
    for short, names in {
        "mon": ("monday", "mondays"),
        "tue": ("tuesday", "tuesdays"),
        "wed": ("wednesday", "wednesdays"),
        "thu": ("thursday", "thursdays"),
        "fri": ("friday", "fridays"),
        "sat": ("saturday", "saturdays"),
        "sun": ("sunday", "sundays"),
    }.items()
    for name in names
}

IRREGULAR: dict[str, str] = {
    "built": "build",
    "ran": "run",
    "written": "write",
    "wrote": "write",
    "made": "make",
    "kept": "keep",
    "sent": "send",
    "held": "hold",
    "led": "lead",
    "paid": "pay",
    "taken": "take",
    "took": "take",
    "given": "give",
    "gave": "give",
    "shown": "show",
    "driven": "drive",
    "drove": "drive",
    "chosen": "choose",
    "chose": "choose",
    "seen": "see",
    "saw": "see",
    "spent": "spend",
    "bought": "buy",
    "brought": "bring",
    "found": "find",
    "told": "tell",
    "sold": "sell",
    "caught": "catch",
    "begun": "begin",
    "began": "begin",
    "done": "do",
    "got": "get",
    "gotten": "get",
    "hidden": "hide",
    "hid": "hide",
    "understood": "understand",
    "won": "win",
    **{verb: verb for verb in ("run", "set", "put", "cut", "read", "hit", "shut", "let", "spread")},
}
"""Irregular past forms and their verb, so a passive ("written by Kim") meets its
active ("Kim writes"); a participle spelled as its verb ("run", "set") maps to itself,
so ``meaning`` knows "is run before" for a verb form."""
