"""Client-side migration tools: `litestar userio import` and `litestar userio export` against a running server.

The modules, in the order data flows: `reader` (streaming input with each record's original bytes),
`converters` (`--from auth0|cognito-csv`), `client` (HTTPS, admin tokens, retries, error messages),
`importer` (requests, tasks in flight, the report), `report` (the report and the resume journal), `exporter`
(initiate, wait, download, verify), `progress` (rich bar or plain lines), `commands` (the click commands).

Only the light, dependency-free pieces are re-exported here: `litestar_userio.cli` imports this package on
every `litestar` invocation.
"""

from litestar_userio.transfer.converters import SOURCES, ConversionError, auth0_record, cognito_record
from litestar_userio.transfer.reader import CSVRows, InputError, JSONRecords, RawRecord, RequestOptions

__all__ = [
    "SOURCES",
    "CSVRows",
    "ConversionError",
    "InputError",
    "JSONRecords",
    "RawRecord",
    "RequestOptions",
    "auth0_record",
    "cognito_record",
]
