#!/usr/bin/env python3
"""The attributes (with their defaults) and trace sources of ns-3.44's AQM queue discs, read from
the installed binary, so docs/validation/ns3-aqm-crosscheck.md quotes what runs, not a manual.

    .venv-ns3/bin/python simulator/validation/ns3_aqm_facts.py            # a Markdown list, ~15 s
    .venv-ns3/bin/python simulator/validation/ns3_aqm_facts.py --json     # the same as JSON

Covers ns3::FifoQueueDisc, CoDelQueueDisc, FqCoDelQueueDisc, PieQueueDisc, RedQueueDisc and the
TCP socket's ECN switch (ns3::TcpSocketBase::UseEcn).
"""

from __future__ import annotations

import json
import sys

TYPES = [
    "ns3::FifoQueueDisc",
    "ns3::CoDelQueueDisc",
    "ns3::FqCoDelQueueDisc",
    "ns3::PieQueueDisc",
    "ns3::RedQueueDisc",
]
SOCKET_ATTRS = [("ns3::TcpSocketBase", "UseEcn")]


def facts() -> dict:
    import cppyy  # noqa: PLC0415
    from ns import ns  # noqa: PLC0415, F401 (loads the ns-3 libraries and headers)

    cppyy.cppdef(
        r"""
        namespace aqmfacts {
        // "name\tinitial value\thelp" per attribute the type itself declares (not its parents').
        std::string Attrs(std::string type) {
          ns3::TypeId tid = ns3::TypeId::LookupByName(type);
          std::string out;
          for (uint32_t i = 0; i < tid.GetAttributeN(); ++i) {
            ns3::TypeId::AttributeInformation a = tid.GetAttribute(i);
            out += a.name + "\t" + a.initialValue->SerializeToString(a.checker) + "\t" + a.help + "\n";
          }
          return out;
        }
        std::string Traces(std::string type) {
          ns3::TypeId tid = ns3::TypeId::LookupByName(type);
          std::string out;
          for (ns3::TypeId t = tid; ; t = t.GetParent()) {
            for (uint32_t i = 0; i < t.GetTraceSourceN(); ++i) {
              ns3::TypeId::TraceSourceInformation s = t.GetTraceSource(i);
              out += s.name + "\t" + t.GetName() + "\t" + s.help + "\n";
            }
            if (t == t.GetParent() || t.GetName() == "ns3::Object") break;
          }
          return out;
        }
        std::string Attr(std::string type, std::string name) {
          ns3::TypeId tid = ns3::TypeId::LookupByName(type);
          ns3::TypeId::AttributeInformation info;
          if (!tid.LookupAttributeByName(name, &info)) return "?";
          return info.initialValue->SerializeToString(info.checker) + "\t" + info.help;
        }
        }
        """
    )
    f = cppyy.gbl.aqmfacts

    def rows(text: str, keys: tuple[str, ...]) -> list[dict]:
        return [
            dict(zip(keys, line.split("\t", len(keys) - 1), strict=False)) for line in str(text).splitlines() if line
        ]

    out = {"types": {}}
    for t in TYPES:
        out["types"][t] = {
            "attributes": rows(f.Attrs(t), ("name", "default", "help")),
            "trace_sources": rows(f.Traces(t), ("name", "declared_by", "help")),
        }
    out["socket"] = {}
    for t, a in SOCKET_ATTRS:
        default, _, help_ = str(f.Attr(t, a)).partition("\t")
        out["socket"][f"{t}::{a}"] = {"default": default, "help": help_}
    return out


def markdown(d: dict) -> str:
    lines = []
    for t, v in d["types"].items():
        lines.append(f"### {t}\n")
        lines.append("| attribute | default | help |")
        lines.append("|---|---|---|")
        for a in v["attributes"]:
            lines.append(f"| {a['name']} | `{a['default']}` | {a['help']} |")
        lines.append("\nTrace sources: " + ", ".join(f"`{s['name']}`" for s in v["trace_sources"]) + "\n")
    for k, v in d["socket"].items():
        lines.append(f"`{k}` default `{v['default']}`: {v['help']}")
    return "\n".join(lines)


if __name__ == "__main__":
    d = facts()
    print(json.dumps(d, indent=1) if "--json" in sys.argv[1:] else markdown(d))
