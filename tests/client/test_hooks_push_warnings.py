"""`userio hooks push` prints the save's warnings: a hook that answers a sample event in a wrong shape (issue 46)."""

from __future__ import annotations

from tests.client.conftest import Deployment


async def test_hooks_push_prints_a_warning_naming_the_wrong_member(embedded: Deployment, tmp_path):
    project = await embedded.make_project()
    bad = tmp_path / "bad.ts"
    bad.write_text('export default async function (e: any): Promise<any> { return { is_allowed: "yes" }; }\n')
    good = tmp_path / "good.ts"
    good.write_text("export default async function (e: any): Promise<any> { return { is_allowed: true }; }\n")

    pushed = embedded.cli("hooks", "push", str(bad), *project.args(embedded), cwd=tmp_path)
    clean = embedded.cli("hooks", "push", str(good), *project.args(embedded), cwd=tmp_path)

    assert pushed.returncode == 0, pushed.stderr
    assert "saved 1 oidc.jwt.pre_create hook" in pushed.stderr
    assert 'warning: hooks[0] (oidc.jwt.pre_create): is_allowed must be a boolean, got "yes"' in pushed.stderr
    assert clean.returncode == 0 and "warning:" not in clean.stderr, clean.stderr
