"""The export benchmark's baseline query, shared by the baseline itself and the storage floor."""

from __future__ import annotations


def baseline_query(project_id: str) -> str:
    """The same users as an export reads (attributes, login ids, second factors, roles), one CSV row each."""
    return (
        "SELECT u.id, u.standard_attributes, u.custom_attributes, u.is_disabled, u.created_at,"
        " (SELECT json_agg(json_build_array(i.login_id_key, i.original_value, i.normalized_value))"
        " FROM userio_identity i WHERE i.user_id = u.id),"
        " (SELECT json_agg(json_build_array(a.type, a.oob_target, a.totp_secret))"
        " FROM userio_authenticator a WHERE a.user_id = u.id AND a.kind = 'secondary'),"
        " (SELECT json_agg(r.key) FROM userio_user_role m JOIN userio_role r ON r.id = m.role_id WHERE m.user_id = u.id)"
        f" FROM userio_user u WHERE u.project_id = '{project_id}' ORDER BY u.id"
    )
