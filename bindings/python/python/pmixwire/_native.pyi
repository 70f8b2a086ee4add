"""Type hints of pmixwire._native, the Rust extension (pmix-wire's PMIx client)."""

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

#: PMIX_RANK_WILDCARD: the rank of job-level data in Client.get.
WILDCARD: int

#: A value put, published or passed in event info: mapped to PMIX_STRING,
#: PMIX_BYTE_OBJECT, PMIX_INT64 (PMIX_UINT64 above 2**63-1), PMIX_DOUBLE, PMIX_BOOL.
PmixValue = Union[str, bytes, bytearray, int, float, bool]
#: A process: a rank of our namespace, or (nspace, rank).
ProcSpec = Union[int, Tuple[str, int]]

class PmixError(Exception):
    """A PMIx operation failed."""

    #: The PMIx status code (e.g. -46).
    status: int
    #: Its macro name (e.g. "PMIX_ERR_NOT_FOUND").
    name: str
    #: The operation that failed ("get", "fence", "init", ...).
    op: str

class NotFoundError(PmixError):
    """PMIX_ERR_NOT_FOUND (-46), or a lookup that found only some keys
    (PMIX_ERR_PARTIAL_SUCCESS, -52)."""

class PmixTimeoutError(PmixError):
    """PMIX_ERR_TIMEOUT (-24)."""

class Event:
    """An event notification handed to a handler."""

    status: int
    name: Optional[str]
    source: Tuple[str, int]
    info: Dict[str, Any]

class Client:
    """A PMIx client (PMIx_Init ... PMIx_Finalize) initialised from the
    environment a PMIx launcher gives its processes. Also a context manager
    that finalizes on exit."""

    rank: int
    size: int
    nspace: str
    #: None where the host does not provide the key.
    local_rank: Optional[int]
    local_size: Optional[int]
    node_id: Optional[int]
    hostname: Optional[str]
    appnum: Optional[int]
    initialized: bool
    dialect: str

    def __init__(self, timeout: Optional[float] = None) -> None: ...
    def get(
        self, rank: int, key: str, timeout: Optional[float] = None, nspace: Optional[str] = None
    ) -> Any: ...
    def put(self, key: str, value: PmixValue, scope: str = "global") -> None: ...
    def commit(self) -> None: ...
    def fence(
        self,
        collect: bool = True,
        procs: Optional[Iterable[ProcSpec]] = None,
        timeout: Optional[float] = None,
    ) -> None: ...
    def publish(self, data: Dict[str, PmixValue]) -> None: ...
    def lookup(
        self, keys: Union[str, Sequence[str]], wait: bool = False, timeout: Optional[float] = None
    ) -> Dict[str, Any]: ...
    def unpublish(self, keys: Optional[List[str]] = None) -> None: ...
    def register_event_handler(
        self, callback: Callable[[Event], Any], codes: Optional[List[int]] = None
    ) -> int: ...
    def deregister_event_handler(self, id: int) -> bool: ...
    def notify(
        self,
        status: int,
        range: Union[str, int, None] = None,
        info: Optional[Dict[str, PmixValue]] = None,
    ) -> None: ...
    def process_events(self, timeout: float = 0.0) -> int: ...
    def abort(
        self, status: int = 1, msg: str = "", procs: Optional[Iterable[ProcSpec]] = None
    ) -> None: ...
    def finalize(self) -> None: ...
    def __enter__(self) -> "Client": ...
    def __exit__(self, *args: Any) -> bool: ...

def status_string(code: int) -> Optional[str]: ...
def status_code(name: str) -> int: ...
def pmix_type_of(v: PmixValue) -> str: ...
