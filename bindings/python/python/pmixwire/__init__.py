"""pmixwire: a PMIx client for Python with no C library.

The PMIx wire protocol is pmix-wire's own Rust implementation, so this
package needs no libpmix and speaks to the PMIx server of any launcher
(``pmixw run``, Open MPI's ``mpirun``, PRRTE's ``prterun``, ...) in the
dialect that server announces.

>>> import pmixwire
>>> with pmixwire.Client() as c:                  # doctest: +SKIP
...     c.put("addr", b"...")
...     c.commit()
...     c.fence()
...     peer = c.get((c.rank + 1) % c.size, "addr")
"""

from ._native import (
    WILDCARD,
    Client,
    Event,
    NotFoundError,
    PmixError,
    PmixTimeoutError,
    pmix_type_of,
    status_code,
    status_string,
)
from .store import Store

__all__ = [
    "WILDCARD",
    "Client",
    "Event",
    "NotFoundError",
    "PmixError",
    "PmixTimeoutError",
    "Store",
    "pmix_type_of",
    "status_code",
    "status_string",
]
