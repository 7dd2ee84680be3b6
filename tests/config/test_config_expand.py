"""`${VAR}` expansion over the raw text: `$$` is a literal `$`, an unset variable is an error."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzgate.config import Config
from fuzzgate.config._expand import expand_variables, expanded_values
from fuzzgate.model.errors import ConfigError

Loader = Callable[..., tuple[Config, list[str]]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a ${X} b", "a 1 b"),
        ("${X}${Y_2}", "1two"),
        ("cost $$5", "cost $5"),
        ("$${X}", "${X}"),
        ("$$$${X}", "$${X}"),
        ("$$${X}", "$1"),
        ("$X and $ alone and $", "$X and $ alone and $"),
        ("${1X} ${X-default} ${ X } ${", "${1X} ${X-default} ${ X } ${"),
        ("${EMPTY}|", "|"),
    ],
)
def test_expansion(text: str, expected: str) -> None:
    environ = {"X": "1", "Y_2": "two", "EMPTY": ""}
    assert expand_variables(text, environ, display="f.toml") == expected


def test_values_are_not_expanded_again() -> None:
    assert expand_variables("${A}", {"A": "${B}", "B": "no"}, display="f") == "${B}"


def test_the_expanded_values_are_known_each_once() -> None:
    environ = {"A": "token-1", "B": "token-2", "C": "literal", "EMPTY": ""}
    text = "args = ['${A}', '--x=${B}${A}', '$${C}', '${EMPTY}']"
    assert expanded_values(text, environ) == ("token-1", "token-2")


def test_a_loaded_config_knows_every_value_it_expanded(load: Loader) -> None:
    text = "[target]\ncommand = 'python'\nargs = ['--token=${TOKEN}']\ncwd = '${DIR}'\n"
    config, _ = load(text, environ={"TOKEN": "tok-secret-value", "DIR": "/srv/app"})
    assert set(config.expanded) == {"tok-secret-value", "/srv/app"}


@given(st.text().filter(lambda text: "$" not in text))
def test_text_without_dollar_is_unchanged(text: str) -> None:
    assert expand_variables(text, {}, display="f") == text


@given(st.text(alphabet=st.characters(blacklist_characters="$")), st.text(alphabet="ab{}"))
def test_escaped_references_come_back_literally(prefix: str, name: str) -> None:
    text = prefix + "$${" + name + "}"
    assert expand_variables(text, {}, display="f") == prefix + "${" + name + "}"


def test_unset_variable_names_file_line_and_variable(load: Loader) -> None:
    text = '[target]\ncommand = "srv"\nenv = { TOKEN = "${API_TOKEN}" }\n'
    with pytest.raises(ConfigError) as caught:
        load(text, environ={"OTHER": "x"})
    error = caught.value
    assert error.message == "fuzzgate.toml: line 3, column 18: environment variable ${API_TOKEN} is not set"
    assert error.hint is not None and "$${API_TOKEN}" in error.hint


def test_unset_variable_in_a_comment_is_an_error_with_a_hint(load: Loader) -> None:
    with pytest.raises(ConfigError) as caught:
        load('# token: ${TOKEN}\n[target]\ncommand = "x"\n')
    assert caught.value.message.startswith("fuzzgate.toml: line 1, column 10:")
    assert caught.value.hint is not None and "comments included" in caught.value.hint


def test_unset_variable_in_yaml(load: Loader) -> None:
    with pytest.raises(ConfigError, match=r"^fuzzgate\.yaml: line 2, column 12: environment variable \$\{U\}"):
        load("target:\n  command: ${U}\n", "fuzzgate.yaml")


def test_expansion_happens_before_parsing_in_both_formats(load: Loader) -> None:
    environ = {"CMD": "python", "BUDGET": "5m", "SECTION": "fuzzgate"}
    toml, _ = load('[target]\ncommand = "${CMD}"\n[${SECTION}]\nbudget = "${BUDGET}"\n', environ=environ)
    yaml, _ = load("target: {command: ${CMD}}\n${SECTION}:\n  budget: ${BUDGET}\n", "fuzzgate.yaml", environ=environ)
    assert toml.target.command == yaml.target.command == "python"
    assert toml.budget_s == yaml.budget_s == 300.0


def test_dollar_dollar_gives_a_literal_dollar_in_values(load: Loader) -> None:
    config, _ = load('[target]\ncommand = "srv"\nargs = ["--price=$$5", "$${HOME}", "$PATH"]\n', environ={})
    assert config.target.args == ("--price=$5", "${HOME}", "$PATH")
