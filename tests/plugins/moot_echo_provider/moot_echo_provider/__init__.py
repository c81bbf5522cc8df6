"""The `echo:` provider: its registry row. Light on purpose: moot loads this module to learn the provider's name
and facts; the builder (and pydantic-ai with it) is imported only when an `echo:` model is built."""

from moot.domain.providers import ProviderSpec, RateLimitDefaults

provider = ProviderSpec(
    name="echo",
    description="Repeats the question back (a test plugin)",
    builder="moot_echo_provider.model:build",
    aliases=("parrot",),
    key_vars=("ECHO_API_KEY",),
    key_required=False,
    base_url="optional",
    default_url="http://echo.invalid/v1",
    runs_here=True,
    end_marker=False,
    rate_limits=RateLimitDefaults(concurrent=3),
)
