"""Fixed pools of real values for formats named in words: what `hints` offers a field it recognises.

A tool that checks its input (an IANA zone, a currency code) accepts only real values, and a tool
that is never sent the same request twice needs many distinct ones to keep getting past its checks.
These pools are written out here, not read from the machine (`zoneinfo.available_timezones()`
depends on the installed tzdata), so that the same seed gives the same requests everywhere. Each
pool starts with the values `hints` puts in a field's `examples`; the rest go to anchored draws
through `_anchor.POOL_KEYWORD`. Only `hints` imports this module: the generation worker, whose
Hypothesis mixes the constants of every loaded module of this package into its draws, never does.
"""

from __future__ import annotations

from typing import Any, Final

TIMEZONES: Final[tuple[str, ...]] = (
    "America/New_York",
    "Europe/London",
    "Asia/Tokyo",
    "UTC",
    "Europe/Paris",
    "Asia/Kolkata",
    "America/Los_Angeles",
    "Australia/Sydney",
    "Europe/Berlin",
    "America/Chicago",
    "Asia/Shanghai",
    "America/Sao_Paulo",
    "Africa/Cairo",
    "Etc/UTC",
    "America/Denver",
    "America/Phoenix",
    "America/Anchorage",
    "Pacific/Honolulu",
    "America/Toronto",
    "America/Vancouver",
    "America/Halifax",
    "America/St_Johns",
    "America/Mexico_City",
    "America/Bogota",
    "America/Lima",
    "America/Santiago",
    "America/Caracas",
    "America/Argentina/Buenos_Aires",
    "America/Montevideo",
    "America/La_Paz",
    "America/Panama",
    "America/Havana",
    "Europe/Madrid",
    "Europe/Rome",
    "Europe/Amsterdam",
    "Europe/Brussels",
    "Europe/Vienna",
    "Europe/Zurich",
    "Europe/Stockholm",
    "Europe/Oslo",
    "Europe/Copenhagen",
    "Europe/Helsinki",
    "Europe/Warsaw",
    "Europe/Prague",
    "Europe/Budapest",
    "Europe/Athens",
    "Europe/Bucharest",
    "Europe/Sofia",
    "Europe/Belgrade",
    "Europe/Istanbul",
    "Europe/Moscow",
    "Europe/Lisbon",
    "Europe/Dublin",
    "Europe/Riga",
    "Europe/Vilnius",
    "Europe/Tallinn",
    "Atlantic/Reykjavik",
    "Atlantic/Azores",
    "Atlantic/Canary",
    "Africa/Johannesburg",
    "Africa/Lagos",
    "Africa/Nairobi",
    "Africa/Casablanca",
    "Africa/Algiers",
    "Africa/Abidjan",
    "Asia/Hong_Kong",
    "Asia/Singapore",
    "Asia/Seoul",
    "Asia/Taipei",
    "Asia/Manila",
    "Asia/Jakarta",
    "Asia/Bangkok",
    "Asia/Ho_Chi_Minh",
    "Asia/Kuala_Lumpur",
    "Asia/Dubai",
    "Asia/Karachi",
    "Asia/Dhaka",
    "Asia/Kathmandu",
    "Asia/Colombo",
    "Asia/Kabul",
    "Asia/Tehran",
    "Asia/Jerusalem",
    "Asia/Riyadh",
    "Asia/Baghdad",
    "Asia/Tashkent",
    "Asia/Almaty",
    "Asia/Yangon",
    "Asia/Vladivostok",
    "Australia/Melbourne",
    "Australia/Brisbane",
    "Australia/Perth",
    "Australia/Adelaide",
    "Australia/Darwin",
    "Pacific/Auckland",
    "Pacific/Fiji",
    "Pacific/Guam",
    "Pacific/Tongatapu",
    "Pacific/Kiritimati",
    "Indian/Maldives",
    "Indian/Mauritius",
)
"""Zone names in the IANA database for many years (no recently renamed ones), most used first."""

ISO_8601: Final[tuple[str, ...]] = (
    "2024-01-15T10:30:00Z",
    "2024-01-15",
    "2024-01-15T10:30:00+02:00",
    "2023-12-31T23:59:59Z",
    "2024-02-29T00:00:00Z",
    "2025-06-30T12:00:00-07:00",
    "2024-07-04",
    "2022-11-05T18:45:10.250Z",
    "2024-10-01T06:05:00+05:30",
    "2021-03-09",
)
UUIDS: Final[tuple[str, ...]] = (
    "123e4567-e89b-12d3-a456-426614174000",
    "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
    "9b2d6f4a-1c3e-4d5f-8a7b-6c9d0e1f2a3b",
    "00000000-0000-0000-0000-000000000000",
    "c56a4180-65aa-42ec-a945-5fd21dec0538",
    "f47ac10b-58cc-4372-a567-0e02b2c3d479",
)
EMAILS: Final[tuple[str, ...]] = (
    "user@example.com",
    "alice@example.org",
    "bob.smith@example.net",
    "test+filter@example.com",
    "admin@mail.example.net",
)
EPOCHS: Final[tuple[Any, ...]] = (
    1700000000,
    "1700000000",
    1609459200,
    "1609459200",
    1234567890,
    "1234567890",
    1735689600,
    "1735689600",
)
LANGUAGES: Final[tuple[str, ...]] = ("en", "fr", "de", "es", "it", "pt", "nl", "ja", "zh", "ko", "ru", "ar", "hi", "sv")
COUNTRIES: Final[tuple[str, ...]] = ("US", "FR", "GB", "DE", "JP", "CA", "AU", "IN", "BR", "CN", "ES", "IT", "MX", "ZA")
CURRENCIES: Final[tuple[str, ...]] = ("USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "CNY", "INR", "BRL", "SEK")
LOCALES: Final[tuple[str, ...]] = (
    "en-US",
    "fr-FR",
    "en-GB",
    "de-DE",
    "es-ES",
    "ja-JP",
    "pt-BR",
    "zh-CN",
    "it-IT",
    "nl-NL",
    "ko-KR",
    "es-MX",
)
SEMVERS: Final[tuple[str, ...]] = ("1.2.3", "0.1.0", "2.0.0", "1.0.0-beta.1", "10.4.7", "3.11.2")
HEX_COLOURS: Final[tuple[str, ...]] = ("#ff0000", "#00ff00", "#0000ff", "#ffffff", "#000000", "#336699", "#abcdef")

MOMENTS: Final[tuple[tuple[int, int, int, int, int, int], ...]] = (
    (2024, 1, 15, 10, 30, 0),
    (2023, 12, 31, 23, 59, 59),
    (2024, 2, 29, 0, 0, 0),
    (2025, 6, 30, 12, 0, 0),
    (2024, 7, 4, 8, 15, 30),
    (2022, 11, 5, 18, 45, 10),
    (2024, 10, 1, 6, 5, 45),
    (2021, 3, 9, 14, 20, 5),
)
"""(year, month, day, hour, minute, second) for rendering a written date format (`YYYY-MM-DD`,
`HH:MM`): the first gives the example, all of them the pool. Each is a valid date and time."""
