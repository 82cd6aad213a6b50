"""The `userio` client: the console script of `litestar-userio-client` (the server's `cli` extra pulls it in).

Its own distribution: it never imports the server (`litestar_userio`) and the server never imports it
(tests/test_client_package.py checks); what both need (login-id normalization, admin tokens, retries, private
files, ids) is `userio_core`, the distribution both depend on. The modules, in the
order data flows: `profiles` (where to connect), `reader` (streaming input with each record's original
bytes), `sources` (`--from auth0|cognito-csv|supabase|...`, one module per system), `phones` (`--phone-region`),
`client` (HTTPS, admin tokens, retries, error messages), `plan` (an import's options and files checked),
`records` / `batches` / `sender` / `details` (input records, requests under the size limit, tasks in flight,
their details), `importer` (the import run), `result` (its closing lines), `report`
(the report and the resume journal), `summary` (failures grouped), `exporter` (initiate, wait, download,
verify), `progress` (rich bar or plain lines), `commands` / `hook_commands` / `rehash_status` / `main`
(the click commands).
"""

from userio_client.reader import CSVRows, InputError, JSONRecords, RawRecord, RequestOptions
from userio_client.sources import SOURCES, ConversionError, auth0_record, cognito_record

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
