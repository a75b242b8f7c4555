"""Credentials given to a known tool or in a known header (error code
``secret_in_memory``, docs/reference.md#error-secret_in_memory), read as families
rather than strings: a known credential option of a known command followed by a
value that is not a placeholder (``docker login -p``, ``redis-cli -a``, ``sqlcmd
-P``, ``ldapsearch -w``, ``openssl -pass pass:``, ``htpasswd -b FILE USER PASSWORD``,
``smbclient -U user%password``, ``zip -P``, ``keytool -storepass``, ``plink -pw``,
``echo PASSWORD | … --password-stdin`` …), and a credential-carrying header
(``X-Api-Key``, ``X-Auth-Token``, ``Private-Token``, session cookies …) with a
value that is not a placeholder (``rules.is_placeholder``). Each command is
read from its name to the end of its pipeline stage (at most
``_STAGE_CHARS`` characters), so long texts scan in linear time. Choices:
docs/DECISIONS.md#smaller-gaps-idempotency-fingerprint-secret-families-invisible-characters-terminal-safety-issue-21-item-7.
"""

import re
import string
from collections.abc import Iterator
from dataclasses import dataclass

from chalicelib.services.secrets.rules import Rule, is_placeholder

_STAGE_CHARS = 512
# A stage of a command line ends at a line break, a pipe, ";" or "&&".
_STAGE_END = re.compile(r"[\r\n|;&]")
_BEFORE_COMMAND = r"(?<![A-Za-z0-9_.\-])"
_AFTER_COMMAND = r"(?![A-Za-z0-9_\-])"
_OPTION_START = r"(?<![^\s\"'])"
_QUOTED_OR_BARE = (
    r"(?:\"(?P<dq>[^\"\r\n]{1,256})\"|'(?P<sq>[^'\r\n]{1,256})'|(?P<bare>[^\s\"'`|;&]{1,256}))"
)


@dataclass(frozen=True, slots=True)
class _Family:
    """Commands, and the options of theirs that carry a credential (group ``dq``,
    ``sq`` or ``bare`` is the value)."""

    commands: re.Pattern[str]
    options: re.Pattern[str]
    minimum: int = 4


def _command(*names: str) -> re.Pattern[str]:
    return re.compile(_BEFORE_COMMAND + "(?:" + "|".join(names) + ")" + _AFTER_COMMAND)


_SPACED = r"(?:=|[ \t]+|:)"
_GLUED_TOO = r"(?:=|[ \t]*|:)"
_GLUED_ONLY = ""


def _option(*flags: str, separator: str = _SPACED, case: bool = True) -> re.Pattern[str]:
    """``FLAG VALUE``, ``FLAG=VALUE`` or ``FLAG:VALUE`` (``separator`` says which)."""
    return re.compile(
        _OPTION_START + "(?:" + "|".join(flags) + ")" + separator + _QUOTED_OR_BARE,
        0 if case else re.IGNORECASE,
    )


_FAMILIES = (
    # Container registry logins: -p/--password VALUE (--password-stdin reads stdin).
    _Family(
        _command(
            r"(?:docker|podman|buildah|nerdctl|skopeo|oras|crane|regctl)(?:\.exe)?"
            r"[ \t]+(?:\S{1,64}[ \t]+){0,6}?login",
            r"helm[ \t]+registry[ \t]+login",
            r"helm[ \t]+repo[ \t]+add",
            r"cf[ \t]+(?:login|auth)",
            r"az[ \t]+(?:login|acr[ \t]+login)",
            r"oc[ \t]+login",
            r"twine[ \t]+upload",
        ),
        _option("-p", "--password", "--pass"),
    ),
    # Remote-admin and pentest tools that take -p PASSWORD (psexec, evil-winrm, …).
    _Family(
        _command(
            "psexec(?:64)?(?:\\.exe)?",
            "paexec",
            "evil-winrm",
            "crackmapexec",
            "netexec",
            "nxc",
            "smbmap",
            "rdesktop",
            "rabbitmqadmin",
            "mongo",
            "mongosh",
            "mongodump",
            "mongorestore",
            "mongoexport",
            "mongoimport",
            "mongostat",
            "mongotop",
            "influx",
        ),
        _option("-p", "--password", "-password", "--pass"),
    ),
    # redis-cli -a PASSWORD / --pass / --askpass (prompts).
    _Family(
        _command("redis-cli", "keydb-cli", "valkey-cli"), _option("-a", "--pass", "--password")
    ),
    # SQL Server, Sybase and IPMI/MQTT tools: capital -P PASSWORD.
    _Family(
        _command(
            "sqlcmd",
            "bcp",
            "osql",
            "isql",
            "ipmitool",
            "mosquitto_pub",
            "mosquitto_sub",
            "mosquitto_rr",
        ),
        _option("-P", separator=_GLUED_TOO),
    ),
    # OpenLDAP clients: -w PASSWORD (-W prompts); ldappasswd -s NEWPASSWORD.
    _Family(
        _command(
            "ldapsearch",
            "ldapadd",
            "ldapmodify",
            "ldapdelete",
            "ldapmodrdn",
            "ldapcompare",
            "ldapwhoami",
            "ldapexop",
            "ldappasswd",
            "ldapurl",
        ),
        _option("-w"),
    ),
    _Family(_command("ldappasswd"), _option("-s")),
    # OpenSSL: -pass/-passin/-passout/-password pass:VALUE, enc -k VALUE.
    _Family(
        _command("openssl"),
        re.compile(
            _OPTION_START
            + r"(?:-(?:pass|passin|passout|password|kdfpass)[ \t]+[\"']?pass:|-k[ \t]+)"
            + _QUOTED_OR_BARE
        ),
    ),
    # Archives: zip/unzip -P VALUE, 7z/rar -pVALUE.
    _Family(_command("zip", "unzip", "zipcloak", "funzip"), _option("-P", "--password")),
    _Family(
        _command("7z", "7za", "7zr", "7zz", "rar", "unrar"), _option("-p", separator=_GLUED_ONLY)
    ),
    # Java keystores.
    _Family(
        _command("keytool", "jarsigner", "apksigner"),
        _option(
            "-storepass",
            "-keypass",
            "-srcstorepass",
            "-deststorepass",
            "-srckeypass",
            "-destkeypass",
            "-new",
            "--ks-pass",
            "--key-pass",
            case=False,
        ),
    ),
    # PuTTY tools and Windows remote desktop and shares.
    _Family(_command("plink", "pscp", "psftp", "putty"), _option("-pw")),
    _Family(_command("xfreerdp", "wlfreerdp", "sdl-freerdp"), _option("/p", "/password")),
    _Family(_command("ssh-keygen"), _option("-N", "-P")),
    # gpg --passphrase VALUE.
    _Family(_command("gpg", "gpg2"), _option("--passphrase")),
    # lftp -u user,PASSWORD.
    _Family(
        _command("lftp"),
        re.compile(_OPTION_START + r"(?:-u|--user)[ \t]+[\"']?[^\s,\"']{1,128}," + _QUOTED_OR_BARE),
    ),
    # sqlplus user/PASSWORD@db.
    _Family(
        _command("sqlplus", "rman", "expdp", "impdp", "sqlldr"),
        re.compile(r"(?<![^\s\"'])[A-Za-z][\w$#]{0,127}/(?P<bare>[^\s/@\"']{1,256})(?=@|\s|$)"),
    ),
    # nmcli … password VALUE, wpa_passphrase SSID VALUE.
    _Family(
        _command("nmcli"), _option("password", "wifi-sec\\.psk", "802-11-wireless-security\\.psk")
    ),
    # rabbitmqctl add_user/change_password USER PASSWORD.
    _Family(
        _command("rabbitmqctl"),
        re.compile(r"(?:add_user|change_password)[ \t]+\S{1,128}[ \t]+" + _QUOTED_OR_BARE),
    ),
)


# Words of the command patterns that name no command.
_NOT_COMMAND_NAMES = frozenset({"exe", "64", "add", "auth", "upload", "registry", "repo", "acr"})


def _literal_words(pattern: str) -> frozenset[str]:
    """The words a command pattern spells out (a superset of its command names)."""
    bare = re.sub(r"\(\?<?[!=][^)]*\)|\[[^\]]*\]|\{[^}]*\}|\\.", " ", pattern)
    return frozenset(re.findall(r"[a-z0-9][a-z0-9_\-]*", bare)) - _NOT_COMMAND_NAMES


# Per family, the command names one of which a text must contain as a word for its
# pattern to run: one split and set lookups are ~10x faster than running every pattern.
_FAMILY_WORDS = tuple(_literal_words(family.commands.pattern) for family in _FAMILIES)
_ALL_COMMAND_WORDS = frozenset().union(*_FAMILY_WORDS) | {"login"}
_PUNCTUATION_TO_SPACE = str.maketrans(
    dict.fromkeys(string.punctuation.replace("-", "").replace("_", ""), " ")
)

# Samba tools and mount.cifs: -U/--user user%PASSWORD (anywhere: "%" after a user name
# in a -U option is the Samba separator).
_SAMBA_USER = re.compile(
    _OPTION_START
    + r"(?:-U|--user(?:name)?)(?:=|[ \t]*)[\"']?[^\s%\"']{1,128}%"
    + r"(?P<bare>[^\s\"'`]{1,256})"
)
# htpasswd with -b takes the password on the command line: [-c] FILE USER PASSWORD, or
# -n USER PASSWORD.
_HTPASSWD = re.compile(_BEFORE_COMMAND + r"htpasswd" + _AFTER_COMMAND)
_WORD = re.compile(r"\"[^\"\r\n]*\"|'[^'\r\n]*'|[^\s\"']+")
# echo/printf VALUE | COMMAND that reads a password on stdin.
_ECHO_TO_STDIN = re.compile(
    _BEFORE_COMMAND
    + r"(?:echo|printf)(?:[ \t]+-[neE]+)*[ \t]+"
    + _QUOTED_OR_BARE
    + r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?(?P<reader>[^\r\n|;&]{1,256})"
)
_STDIN_READER = re.compile(
    r"--password-stdin|--passphrase-fd[ \t]+0|\bpasswd[ \t]+--stdin\b|\bchpasswd\b|"
    r"\bsudo[ \t]+-S\b|-pass(?:in)?[ \t]+stdin|\bcryptsetup\b|--key-file[ \t=]+-"
)
# Redis AUTH [user] PASSWORD, as a command after a prompt or on a line that names Redis.
_REDIS_AUTH = re.compile(
    r"(?:^|[>\s\"'])AUTH[ \t]+(?:(?P<user>[^\s\"']{1,64})[ \t]+)?"
    + _QUOTED_OR_BARE
    + r"[ \t]*(?:$|[\"'\r\n])",
    re.MULTILINE,
)

# --- headers ------------------------------------------------------------------------------

# A header (or JSON/YAML key) whose value is a credential: X-Api-Key, Api-Key,
# X-Auth-Token, X-Access-Token, Private-Token, X-Vault-Token, Ocp-Apim-Subscription-Key …
_CREDENTIAL_HEADER = re.compile(
    r"(?<![A-Za-z0-9_])(?P<name>(?:api-?key|apikey|auth-?token|auth-?key|access-?token|private-?token|vault-?token|"
    r"security-?token|session-?token|subscription-?key|secret-?key|client-?secret|"
    r"access-?key|id-?token|refresh-?token))"  # after "X-", "Gitlab-" … or alone
    r"[\"']?[ \t]*:[ \t]*" + _QUOTED_OR_BARE,
    re.IGNORECASE,
)
_COOKIE_HEADER = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:set-)?cookie[\"']?[ \t]*:[ \t]*(?P<pairs>[^\r\n]{1,1024})",
    re.IGNORECASE,
)
_COOKIE_PAIR = re.compile(r"(?P<name>[A-Za-z0-9_.\-]{1,128})=(?P<value>[^;\s,\"']{1,2048})")
_SESSION_COOKIE = re.compile(r"sess|sid|auth|token|jwt|remember|login|csrf|xsrf", re.IGNORECASE)


def _value(match: re.Match[str]) -> str:
    """The value a match captured, quoted or bare."""
    groups = match.groupdict()
    return next(groups[name] for name in ("dq", "sq", "bare") if groups.get(name) is not None)


def _credential(value: str, minimum: int = 4) -> bool:
    """A value that could be a credential: ``minimum`` characters, not an option, not a
    placeholder (``$VAR``, ``<key>``, ``changeme``, ``***`` …) nor an ``env:``/``file:``
    reference."""
    return (
        len(value) >= minimum
        and not value.startswith("-")
        and not is_placeholder(value)
        and re.match(r"(?:env|file|fd|stdin)(?::|$)", value) is None
    )


def _stages(text: str, commands: re.Pattern[str]) -> Iterator[str]:
    """The rest of each pipeline stage after a command name."""
    covered = 0
    for match in commands.finditer(text):
        if match.start() < covered:
            continue  # read with the stage before: repeated names stay linear
        rest = text[match.end() : match.end() + _STAGE_CHARS]
        end = _STAGE_END.search(rest)
        stage = rest if end is None else rest[: end.start()]
        covered = match.end() + len(stage) - _STAGE_CHARS // 4
        yield stage


def _tool_options(text: str) -> Iterator[str]:
    """Credential options of the known tools (``_FAMILIES``)."""
    words_of_text = frozenset(text.lower().translate(_PUNCTUATION_TO_SPACE).split())
    if _ALL_COMMAND_WORDS.isdisjoint(words_of_text):
        return  # the common case
    for family, words in zip(_FAMILIES, _FAMILY_WORDS, strict=True):
        if words.isdisjoint(words_of_text):
            continue
        for stage in _stages(text, family.commands):
            for match in family.options.finditer(stage):
                value = _value(match)
                if _credential(value, family.minimum):
                    yield value


def _samba_user(text: str) -> Iterator[str]:
    """``-U user%password`` (Samba tools)."""
    if "%" not in text:
        return
    for match in _SAMBA_USER.finditer(text):
        if _credential(match.group("bare")):
            yield match.group("bare")


def _htpasswd(text: str) -> Iterator[str]:
    """``htpasswd -b [-c] FILE USER PASSWORD`` and ``htpasswd -nb USER PASSWORD``."""
    if "htpasswd" not in text:
        return
    for stage in _stages(text, _HTPASSWD):
        words = [w.strip("\"'") for w in _WORD.findall(stage)]
        flags = "".join(w[1:] for w in words if w.startswith("-") and len(w) > 1)
        if "b" not in flags:
            continue
        positional, skip = [], False
        for word in words:
            if skip:
                skip = False
            elif word.startswith("-") and len(word) > 1:
                skip = word[-1] in "Cr"  # -C cost, -r rounds take a number
            else:
                positional.append(word)
        at = 1 if "n" in flags else 2
        if len(positional) > at and _credential(positional[at]):
            yield positional[at]


def _echo_to_stdin(text: str) -> Iterator[str]:
    """``echo PASSWORD | docker login --password-stdin`` and other stdin readers."""
    if "|" not in text:
        return
    for match in _ECHO_TO_STDIN.finditer(text):
        value = _value(match)
        if _STDIN_READER.search(match.group("reader")) and _credential(value):
            yield value.split(":", 1)[-1] if "chpasswd" in match.group("reader") else value


def _redis_auth(text: str) -> Iterator[str]:
    """Redis ``AUTH [user] password`` on a line that names Redis or after a prompt."""
    for line in text.splitlines():
        if "AUTH" not in line:
            continue
        for match in _REDIS_AUTH.finditer(line):
            value = _value(match)
            prompted = ">" in line[: match.start() + 1] or "redis" in line.lower()
            word = value.rstrip(".,;:!?")  # "AUTH is disabled." is a sentence
            if prompted and _credential(value) and any(not c.isalpha() for c in word):
                yield value


def _credential_header(text: str) -> Iterator[str]:
    """A credential header's value: 8+ characters with a digit, or 16+."""
    if ":" not in text:
        return
    for match in _CREDENTIAL_HEADER.finditer(text):
        value = _value(match).strip()
        if " " in value:
            continue
        if _credential(value, 8) and (any(c.isdigit() for c in value) or len(value) >= 16):
            yield value


def _session_cookie(text: str) -> Iterator[str]:
    """A ``Cookie``/``Set-Cookie`` session value: 16+ characters with a digit."""
    if "cookie" not in text.lower():
        return
    covered = 0
    for match in _COOKIE_HEADER.finditer(text):
        if match.start() < covered:
            continue  # inside the header before: repeated headers stay linear
        covered = match.end()
        for pair in _COOKIE_PAIR.finditer(match.group("pairs")):
            value = pair.group("value")
            if (
                _SESSION_COOKIE.search(pair.group("name"))
                and _credential(value, 16)
                and any(c.isdigit() for c in value)
            ):
                yield value


_TOOL_HINTS = (
    *("login", "psexec", "winrm", "crackmapexec", "netexec", "nxc", "smbmap", "rdesktop"),
    *("rabbitmq", "mongo", "influx", "-cli", "sqlcmd", "bcp", "osql", "isql", "ipmitool"),
    *("mosquitto", "ldap", "openssl", "zip", "7z", "rar", "keytool", "jarsigner"),
    *("apksigner", "plink", "pscp", "psftp", "putty", "freerdp", "ssh-keygen", "gpg"),
    *("lftp", "sqlplus", "rman", "expdp", "impdp", "sqlldr", "nmcli", "twine"),
    *("helm", "%", "htpasswd", "echo", "printf", "auth"),
)


def tool_rules() -> tuple[Rule, ...]:
    """The rules of this module, in the order they run (after ``context_rules``)."""
    return (
        Rule(
            "password on a command line",
            (_tool_options, _samba_user, _htpasswd, _echo_to_stdin, _redis_auth),
            hints=_TOOL_HINTS,
        ),
        Rule(
            "credential header",
            (_credential_header, _session_cookie),
            hints=("key", "token", "secret", "cookie"),
        ),
    )
