"""The rules that keep the house the shape docs/architecture.md draws.

Import directions are import-linter's (pyproject.toml, run by scripts/test.sh); these are
the rest: sizes, who owns pools, sync/async parity, and that every setting and provider
fact is written once and registered. All read the source or the classes; nothing runs.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

from websearch_core.blend.run import BlendRunner
from websearch_core.config import ENVIRONMENT, Settings, SettingsArguments, settings_table
from websearch_core.fetch.many import BulkReader
from websearch_core.fetch.service import FetchService
from websearch_core.models import SEARCH_OPTIONS, SearchRequest
from websearch_core.providers import PROVIDERS
from websearch_core.providers.base import Provider
from websearch_core.search.drive import Driver
from websearch_core.search.service import SearchService
from websearch_core.session import WebSearch

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("websearch_core", "langchain_websearch", "llamaindex_websearch")
SOURCES = sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))

#: A module holds one concern; past this it holds two.
MAX_MODULE_LINES = 600
#: A class past this does more than one thing (the facade is ~200).
MAX_CLASS_LINES = 400
#: What owns threads, processes or connections: made by a service, closed by it.
POOLS = {"ThreadPoolExecutor", "ProcessPoolExecutor", "Client", "AsyncClient", "Pool"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_600_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(ROOT)}: {lines} lines: split it"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_class_is_over_400_lines(path: Path) -> None:
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ClassDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            assert length <= MAX_CLASS_LINES, f"{path.name}: class {node.name} is {length} lines"


def _called(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        function = node.func
        if isinstance(function, ast.Attribute):
            return function.attr
        if isinstance(function, ast.Name):
            return function.id
    return None


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_pool_is_made_at_import(path: Path) -> None:
    # A pool made at import is shared by every session and closed by none: one hung peer
    # would starve every caller in the process.
    for statement in _tree(path).body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in ast.walk(statement):
            name = _called(node)
            assert name not in POOLS, f"{path.name}:{node.lineno}: {name}() at module level"


def test_the_pool_rule_would_see_one() -> None:
    made = ast.parse("import concurrent.futures as f\nPOOL = f.ThreadPoolExecutor(8)\n")
    assert [_called(n) for n in ast.walk(made) if _called(n) in POOLS] == ["ThreadPoolExecutor"]


# -- sync and async twins: hand-written, side by side, checked here --------------------------

#: Public methods that do no I/O a caller would wait for on an event loop.
NOT_WAITED_ON = {
    "honoured_options": "reads the configuration",
    "refusal_for": "plans a search without sending it",
    "start_workers": "blocking by design: the service calls it on a thread at start-up",
}
SERVICES = (Driver, SearchService, BlendRunner, FetchService, BulkReader)


def _parameters(function: object) -> list[tuple[str, object, object]]:
    signature = inspect.signature(function)  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


def _public_methods(cls: type) -> dict[str, object]:
    return {
        name: member
        for name, member in vars(cls).items()
        if callable(member) and not name.startswith("_")
    }


def test_every_public_method_of_websearch_has_an_async_twin_with_equal_parameters() -> None:
    methods = _public_methods(WebSearch)
    for name, method in methods.items():
        if (name.startswith("a") and name[1:] in methods) or name in NOT_WAITED_ON:
            continue
        twin = methods.get(f"a{name}")
        assert twin is not None, f"WebSearch.{name} has no async twin a{name}"
        assert _parameters(twin) == _parameters(method), f"WebSearch.{name} and a{name} differ"
    assert _parameters(WebSearch.__aexit__) == _parameters(WebSearch.__exit__)


@pytest.mark.parametrize("service", SERVICES, ids=lambda cls: cls.__name__)
def test_a_service_s_twins_take_equal_parameters(service: type) -> None:
    methods = _public_methods(service)
    pairs = [(name, f"a{name}") for name in methods if f"a{name}" in methods]
    assert pairs, f"{service.__name__} has no sync/async pair"
    for name, twin in pairs:
        assert _parameters(methods[twin]) == _parameters(methods[name]), (
            f"{service.__name__}.{name} and {twin} differ"
        )


# -- written once: settings, search options, provider facts -----------------------------------


def test_settings_arguments_are_the_settings_fields() -> None:
    declared = set(SettingsArguments.__optional_keys__ | SettingsArguments.__required_keys__)
    assert declared == set(Settings.model_fields) - {"provider"}  # provider: positional


def test_every_setting_is_declared_whole() -> None:
    for name, field in Settings.model_fields.items():
        assert field.description, f"{name} has no sentence for the docs"
        assert name in ENVIRONMENT
    variables = [variable for names in ENVIRONMENT.values() for variable in names]
    assert len(variables) == len(set(variables)), "one variable feeds two settings"


def test_the_docs_table_of_settings_is_the_declarations() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- settings: [^\n]*-->\n(.*?)\n<!-- /settings -->", page, re.S)
    assert shown is not None, (
        "docs/configuration.md has lost its settings table's markers: the table sits between "
        "'<!-- settings: made by websearch_core.config.settings_table() -->' and "
        "'<!-- /settings -->', each on a line of its own"
    )
    assert shown.group(1) == settings_table(), (
        "docs/configuration.md's settings table is not the declarations in config.py: replace "
        "the lines between its markers with the output of python -c 'from "
        "websearch_core.config import settings_table; print(settings_table())'"
    )


def test_search_options_are_the_request_fields_and_two_more() -> None:
    assert set(SEARCH_OPTIONS) == set(SearchRequest.model_fields) - {"query"} | {"site", "provider"}


def _provider_classes() -> list[type[Provider]]:
    found = []
    import websearch_core.providers as package

    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Provider) and not inspect.isabstract(cls):
                found.append(cls)
    return found


def test_every_provider_is_registered_and_its_facts_name_real_settings() -> None:
    fields = set(Settings.model_fields)
    registered = set(PROVIDERS.values())
    for cls in _provider_classes():
        assert cls in registered, f"{cls.__name__} is not in providers.PROVIDERS"
    for name, cls in PROVIDERS.items():
        assert cls.name == name
        for fact in ("enabled_by", "base_url_setting", "key_setting", "model_setting"):
            setting = getattr(cls, fact, None)
            assert setting is None or setting in fields, f"{name}.{fact} = {setting!r}"
        if cls.enabled_by is not None:
            assert ENVIRONMENT[cls.enabled_by], f"nothing in the environment turns {name} on"
        assert not (cls.paid and not cls.blends), f"{name} is paid but never blends"
        assert not (cls.grounded and cls.blends), f"{name}: grounded answers are not blended"
        if cls.grounded:
            assert getattr(cls, "model_setting", None) in fields, f"{name} has no model setting"


def test_the_architecture_page_places_every_module() -> None:
    # Its tree has a line per module (the service's are named on one line): a module added
    # without a line there fails here.
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for path in sorted((ROOT / "websearch_core").rglob("*.py")):
        if path.name == "__init__.py" and path.parent.name in (
            "net",
            "fetch",
            "search",
            "blend",
            "server",
        ):
            continue  # a package's docstring only: its folder's line stands for it
        assert re.search(rf"\b{re.escape(path.name)}\b", page), (
            f"docs/architecture.md leaves out {path}"
        )


def test_every_mutation_target_names_a_module_and_tests_that_exist() -> None:
    # A module moved without its target made scripts/mutation.py mutate nothing (blend.py).
    spec = importlib.util.spec_from_file_location("mutation", ROOT / "scripts" / "mutation.py")
    assert spec is not None
    assert spec.loader is not None
    mutation = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mutation)
    missing = [
        f"{name}: {path}"
        for name, (module, tests, _) in mutation.TARGETS.items()
        for path in (module, *tests.split())
        if not (ROOT / path).is_file()
    ]
    assert not missing, missing
