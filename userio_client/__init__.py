"""The migration client: the `userio` console script (`pip install 'litestar-userio[cli]'`).

Never imported by the server, the worker or the plugin (tests/test_packaging.py checks). The modules, in the
order data flows: `profiles` (where to connect), `reader` (streaming input with each record's original
bytes), `converters` (`--from auth0|cognito-csv|supabase|clerk|userio`), `phones` (`--phone-region`),
`client` (HTTPS, admin tokens, retries, error messages), `plan` (an import's options and files checked),
`records` / `batches` / `sender` / `details` (input records, requests under the size limit, tasks in flight,
their details), `importer` (the import run), `result` (its closing lines), `report`
(the report and the resume journal), `summary` (failures grouped), `exporter` (initiate, wait, download,
verify), `progress` (rich bar or plain lines), `commands` / `hooks` / `main` (the click commands).
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
