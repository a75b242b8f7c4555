"""What in code and checksum files is not a credential (error code ``secret_in_memory``,
docs/reference.md#secret-check-code): the secret check reads code, configuration and
lock files that agents store, where random-looking strings and secret-named variables
are everywhere and are not secrets.

- **Digests in a checksum context** (``blank_digests``): a base64 or hex string named
  as the digest of a known algorithm (``sha256=…`` in a wheel's ``RECORD``,
  ``integrity="sha384-…"``, ``"integrity": "sha512-…"`` in ``package-lock.json``,
  ``--hash=sha256:…``, ``h1:…`` in ``go.sum``), or standing after a checksum word
  (``checksum``, ``digest``, ``integrity``, ``hash``, ``etag``) is blanked before the
  rules run, when it decodes to exactly that algorithm's digest size. A random token
  of another length after the same label is still read.
- **References, not values** (``is_reference``): the value of a secret-named key that
  is an identifier naming a variable (``password=hashed_password``, ``token:
  accessToken``, ``secret=SECRET_KEY``) rather than a literal. A bare identifier is a
  reference when it is an argument or a field (a ``,``, ``)`` or ``}`` follows it, or
  it follows ``(``), when it is a constant's name (upper case with ``_``), or when it
  joins words one of which is a secret word (``db_password``, ``newToken``), without
  digits. A quoted value is always a literal.
- **Keys about a secret** (``names_a_setting``): a key whose last word is not a secret
  word (``password_store``, ``token_type``, ``secret_backend``) names a setting about a
  secret; its value counts only when it looks random (a letter and a digit, 8+
  characters).

Every pattern is bounded, so long texts scan in linear time.
"""

import base64
import binascii
import re

# Digest sizes in bytes by algorithm label (lower case, without "-" or "_").
_DIGEST_BYTES = {
    "md5": 16,
    "sha1": 20,
    "sha224": 28,
    "sha256": 32,
    "sha384": 48,
    "sha512": 64,
    "sha3224": 28,
    "sha3256": 32,
    "sha3384": 48,
    "sha3512": 64,
    "blake2s": 32,
    "blake2b": 64,
    "blake2b256": 32,
    "h1": 32,  # go.sum: "h1:" + base64 SHA-256
}
_ANY_DIGEST_BYTES = frozenset(_DIGEST_BYTES.values())
_DIGEST_CHARS = r"[A-Za-z0-9+/_\-]{22,172}={0,2}"
_LABELLED_DIGEST = re.compile(
    r"(?<![A-Za-z0-9])(?P<label>md5|sha-?(?:1|224|256|384|512)|sha3-(?:224|256|384|512)|"
    r"blake2[bs](?:-256)?|h1)[=:\-](?P<digest>" + _DIGEST_CHARS + r")(?![A-Za-z0-9+/=_\-])",
    re.IGNORECASE,
)
_WORDED_DIGEST = re.compile(
    r"(?<![A-Za-z0-9])(?:checksum|digest|integrity|hash|etag|fingerprint|sri)\w{0,16}"
    r"[\"']?(?:[ \t]*(?:=|:|=>)[ \t]*|[ \t]+)[\"']?(?P<digest>"
    + _DIGEST_CHARS
    + r")(?![A-Za-z0-9+/=_\-])",
    re.IGNORECASE,
)
_HEX = re.compile(r"[0-9a-fA-F]+")
# Every label and checksum word above contains one of these (the common case: none).
_LABEL_HINTS = (
    *("md5", "sha", "blake", "h1:", "checksum", "digest", "integrity", "hash", "etag"),
    *("fingerprint", "sri"),
)


def _decoded_size(token: str) -> int | None:
    """The size in bytes of ``token`` read as hex or base64 (either alphabet, padding
    optional), or None when it is neither."""
    if _HEX.fullmatch(token) and len(token) % 2 == 0:
        return len(token) // 2
    body = token.rstrip("=")
    altchars = b"-_" if ("-" in body or "_" in body) else None
    if ("-" in body or "_" in body) and ("+" in body or "/" in body):
        return None
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=altchars, validate=True)
    except (ValueError, binascii.Error):
        return None
    return len(raw)


_SSH_PUBLIC_KEY = re.compile(
    r"(?<![A-Za-z0-9\-])(?P<type>ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp(?:256|384|521)|"
    r"sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)[ \t]+"
    r"(?P<body>AAAA[A-Za-z0-9+/]{16,8192}+={0,3})"
)
_PEM_PUBLIC = re.compile(
    r"-----BEGIN (?P<label>(?:RSA |EC |DSA )?PUBLIC KEY|CERTIFICATE(?: REQUEST)?|X509 CRL|"
    r"TRUSTED CERTIFICATE|PGP PUBLIC KEY BLOCK)-----(?P<body>[A-Za-z0-9+/=\s]{0,65536}+)"
    r"-----END (?P=label)-----"
)


def blank_public_keys(text: str) -> str:
    """``text`` with the bodies of public keys and certificates blanked: an OpenSSH
    public key line (``ssh-ed25519 AAAA…``, its body naming the same key type) and
    PEM ``PUBLIC KEY``/``CERTIFICATE``/``CRL`` blocks. They are published, not secret.
    Offsets are kept."""
    if "ssh-" not in text and "sha2-" not in text and "-----BEGIN " not in text:
        return text
    spans = [m.span("body") for m in _PEM_PUBLIC.finditer(text)]
    for match in _SSH_PUBLIC_KEY.finditer(text):
        try:
            raw = base64.b64decode(match.group("body"), validate=True)
        except (ValueError, binascii.Error):
            continue
        name = match.group("type").encode()
        if raw[:4] == len(name).to_bytes(4, "big") and raw[4 : 4 + len(name)] == name:
            spans.append(match.span("body"))
    return _blank_spans(text, spans)


def _blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span replaced by spaces of its length."""
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def decoded_pair(token: str) -> tuple[str, str] | None:
    """``(user, password)`` when ``token`` is base64 of one line of printable text
    ``user:password`` (Basic credentials), else None."""
    body = token.rstrip("=")
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (ValueError, binascii.Error):
        return None
    if ":" not in decoded or not decoded.isprintable() or any(c.isspace() for c in decoded):
        return None
    user, password = decoded.split(":", 1)
    return user, password


def blank_digests(text: str) -> str:
    """``text`` with each digest in a checksum context replaced by spaces of its length
    (see the module docstring); other text is unchanged, so offsets are kept."""
    lowered = text.lower()
    if not any(hint in lowered for hint in _LABEL_HINTS):
        return text
    spans: list[tuple[int, int]] = []
    for match in _LABELLED_DIGEST.finditer(text):
        label = match.group("label").lower().replace("-", "")
        if _decoded_size(match.group("digest")) == _DIGEST_BYTES.get(label):
            spans.append(match.span("digest"))
    for match in _WORDED_DIGEST.finditer(text):
        if _decoded_size(match.group("digest")) in _ANY_DIGEST_BYTES:
            spans.append(match.span("digest"))
    return _blank_spans(text, spans)


# --- identifiers --------------------------------------------------------------------------

_SECRET_WORDS = frozenset(
    {
        *("password", "passwd", "pwd", "pass", "passphrase", "passcode", "secret", "token"),
        *("key", "apikey", "authkey", "privkey", "credential", "contrasena", "contraseña"),
    }
)
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]{0,127}")
_WORDS_OF = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-zñ]+|[0-9]+")
_CONSTANT = re.compile(r"_?[A-Z]{2,}[0-9]{0,2}(?:_[A-Z]{2,}[0-9]{0,2})+")
# Words that start an expression: the value is code, not a literal.
_EXPRESSION_WORDS = frozenset(
    {"await", "new", "yield", "typeof", "lambda", "function", "async", "not", "this", "self"}
)


def words(name: str) -> list[str]:
    """The words of an identifier or key, lower case (``db_password`` → ``db``,
    ``password``; ``newToken`` → ``new``, ``token``; ``API-Key2`` → ``api``, ``key``,
    ``2``); plural secret words are singular."""
    found = [w.lower() for w in _WORDS_OF.findall(name)]
    return [w[:-1] if w.endswith("s") and w[:-1] in _SECRET_WORDS else w for w in found]


def _is_secret_word(word: str) -> bool:
    return word in _SECRET_WORDS


def names_a_secret(value: str) -> bool:
    """Whether ``value`` is a name for a secret rather than one: two or more words
    without digits, joined by ``_``/``-`` or in camelCase, the last a secret word
    (``SA_ACCESS_TOKEN``, ``client-secret``, ``myApiKey``). Such a value stands for a
    credential the way ``<token>`` does (``rules.is_placeholder``)."""
    if any(c.isdigit() for c in value) or not re.fullmatch(r"[A-Za-z_$\-]{3,128}", value):
        return False
    parts = words(value)
    return len(parts) >= 2 and _is_secret_word(parts[-1])


def is_reference(value: str) -> bool:
    """Whether an unquoted value names a variable or starts an expression rather than
    holding a literal: a constant's name (``CLIENT_SECRET``, ``SA_ACCESS_TOKEN``), an
    identifier of two or more words without digits one of which is a secret word
    (``hashed_password``, ``readPassword``, ``_authKey``), or a word that starts an
    expression (``await``, ``new``, ``lambda`` …)."""
    if value in _EXPRESSION_WORDS or _CONSTANT.fullmatch(value):
        return True
    if _IDENTIFIER.fullmatch(value) is None or any(c.isdigit() for c in value):
        return False
    parts = words(value)
    return len(parts) >= 2 and any(map(_is_secret_word, parts))


def names_a_setting(key: str) -> bool:
    """Whether a secret-named key names a setting about a secret rather than holding
    one: its last word (digits aside) is not a secret word (``password_store``,
    ``token_type``, ``secretBackend``, ``api_key_header``)."""
    parts = [w for w in words(key) if not w.isdigit()]
    return bool(parts) and not _is_secret_word(parts[-1])


def looks_random(value: str) -> bool:
    """A value of 8+ characters with a letter and a digit: what a setting's value must
    be to count as a credential (``names_a_setting``)."""
    return len(value) >= 8 and any(c.isalpha() for c in value) and any(c.isdigit() for c in value)


_PHRASE_AFTER = re.compile(r"[ \t]+[A-Za-z0-9][\w/'.\-]*[ \t,]+[A-Za-z0-9]")


def is_description(value: str, rest_of_line: str) -> bool:
    """Whether ``key: value more words`` reads as a description (a docstring's field,
    a table's cell: ``access_token: OAuth access token.``) rather than a value: the
    value has no digit and two or more words follow it on its line."""
    return not any(c.isdigit() for c in value) and _PHRASE_AFTER.match(rest_of_line) is not None
