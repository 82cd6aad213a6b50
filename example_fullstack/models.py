"""The app's tables: users with UUID ids and Argon2 hashes, and teams whose rows point at a user's id."""

from __future__ import annotations

from uuid import UUID

from advanced_alchemy.base import UUIDBase
from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column


class User(UUIDBase):
    __tablename__ = "user_account"

    email: Mapped[str] = mapped_column(String(320), unique=True)
    name: Mapped[str] = mapped_column(String(100))
    hashed_password: Mapped[str] = mapped_column(String(255))


class Team(UUIDBase):
    __tablename__ = "team"

    name: Mapped[str] = mapped_column(String(100))


class TeamMember(UUIDBase):
    __tablename__ = "team_member"

    user_id: Mapped[UUID] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    team_id: Mapped[UUID] = mapped_column(ForeignKey("team.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(20))


metadata = UUIDBase.metadata
