"""The secret check (error code ``secret_in_memory``,
docs/reference.md#error-secret_in_memory): every text a caller stores is read for
credentials before it is kept, because memories are recalled into other agents' prompts.

Modules, in the order the detector runs them:

- ``detector``: ``SecretDetector.find_secret``, the entry point; the assignment,
  password-in-words and high-entropy rules.
- ``scan``: what of a long text is read, in bounded work.
- ``rules``: known credential kinds (provider tokens, private keys, JWTs, connection
  strings) and what counts as a placeholder.
- ``context_rules``: passwords on command lines, ``Authorization`` headers.
- ``tool_rules``: passwords given to known tools, credential headers.
- ``code_rules``: what in code and checksum files is not a value (a variable's name,
  a setting about a secret, a digest in a checksum context, a public key).

How it was built and measured: docs/DECISIONS.md#secret-detection-how-it-was-built-and-tuned.
"""

from chalicelib.services.secrets.detector import (
    HIGH_ENTROPY_KIND,
    UNSCANNABLE_KIND,
    SecretDetector,
)

__all__ = ["HIGH_ENTROPY_KIND", "UNSCANNABLE_KIND", "SecretDetector"]
