"""A family of realistic MCP tool input schemas, mostly in the shapes pydantic and zod emit."""

from __future__ import annotations

from typing import Any

ITEM = {
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 40},
        "qty": {"type": "integer", "minimum": 0, "maximum": 1000},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 5},
    },
    "required": ["name"],
    "type": "object",
}

SCHEMAS: dict[str, dict[str, Any]] = {
    "no_properties": {"type": "object"},
    "empty_properties": {"type": "object", "properties": {}},
    "one_integer": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    "one_string": {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]},
    "bounded_numbers": {
        "type": "object",
        "properties": {
            "i": {"type": "integer", "minimum": -5, "maximum": 5},
            "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "step": {"type": "integer", "multipleOf": 7, "minimum": 10},
            "price": {"type": "number", "multipleOf": 0.01, "minimum": 0, "maximum": 100},
        },
        "required": ["i", "x", "step", "price"],
        "additionalProperties": False,
    },
    "strings": {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2,4}$"},
            "short": {"type": "string", "minLength": 2, "maxLength": 5},
            "when": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "time"},
            "mail": {"type": "string", "format": "email"},
            "link": {"type": "string", "format": "uri"},
            "id": {"type": "string", "format": "uuid"},
            "v4": {"type": "string", "format": "ipv4"},
            "v6": {"type": "string", "format": "ipv6"},
            "host": {"type": "string", "format": "hostname"},
        },
        "required": ["code", "short", "when", "mail", "id"],
    },
    "pydantic_model": {
        "$defs": {
            "Item": ITEM,
            "Priority": {"enum": ["low", "medium", "high"], "title": "Priority", "type": "string"},
        },
        "properties": {
            "items": {"items": {"$ref": "#/$defs/Item"}, "title": "Items", "type": "array", "minItems": 1},
            "priority": {"$ref": "#/$defs/Priority", "default": "medium"},
            "note": {"anyOf": [{"type": "string", "maxLength": 200}, {"type": "null"}], "default": None},
            "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None},
            "dry_run": {"type": "boolean", "default": False},
        },
        "required": ["items"],
        "title": "create_orderArguments",
        "type": "object",
    },
    "examples_and_enum": {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["read", "write", "append", "purge"]},
            "token": {"type": "string", "examples": ["s3cr3t-magic"]},
            "level": {"type": "integer", "default": 3, "minimum": 0, "maximum": 9},
        },
        "required": ["mode", "token"],
        "additionalProperties": False,
    },
    "recursive_tree": {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["value"],
            }
        },
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
    },
    "recursive_linked_list": {
        "definitions": {
            "Cell": {
                "type": "object",
                "properties": {
                    "head": {"type": "string"},
                    "tail": {"anyOf": [{"$ref": "#/definitions/Cell"}, {"type": "null"}]},
                },
                "required": ["head", "tail"],
            }
        },
        "$ref": "#/definitions/Cell",
    },
    "all_of_merge": {
        "type": "object",
        "allOf": [
            {"properties": {"a": {"type": "integer", "minimum": 0}}, "required": ["a"]},
            {"properties": {"a": {"maximum": 10}, "b": {"type": "string", "maxLength": 3}}},
        ],
    },
    "one_of_shapes": {
        "type": "object",
        "properties": {
            "shape": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "circle"}, "r": {"type": "number", "minimum": 0}},
                        "required": ["kind", "r"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "square"}, "side": {"type": "integer", "minimum": 1}},
                        "required": ["kind", "side"],
                        "additionalProperties": False,
                    },
                ]
            }
        },
        "required": ["shape"],
    },
    "type_lists_and_const": {
        "type": "object",
        "properties": {
            "maybe": {"type": ["string", "null"], "maxLength": 3},
            "version": {"const": 2},
            "flags": {"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "integer"}], "items": False},
        },
        "required": ["version"],
    },
    "maps_and_patterns": {
        "type": "object",
        "properties": {
            "env": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 4},
            "labels": {
                "type": "object",
                "patternProperties": {"^x-[a-z]+$": {"type": "integer"}},
                "additionalProperties": False,
            },
        },
        "minProperties": 1,
    },
    "nested_arrays_of_objects": {
        "type": "object",
        "properties": {
            "matrix": {
                "type": "array",
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
                    "maxItems": 3,
                },
                "maxItems": 3,
            }
        },
        "required": ["matrix"],
    },
    "draft7": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "definitions": {
            "Point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}], "additionalItems": False}
        },
        "properties": {"p": {"$ref": "#/definitions/Point"}, "n": {"type": "integer", "exclusiveMinimum": 0}},
        "required": ["p"],
    },
    "any_values": {"type": "object", "properties": {"payload": {}, "anything": True}, "required": ["payload"]},
}
