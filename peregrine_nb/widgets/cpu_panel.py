"""The CPU panel of ``%peregrine cpu``: what the CPU can do, the mask in
force, and every op's variants with the one dispatch picks."""
from __future__ import annotations

from ._display import esc


class CpuPanel:
    """``.info`` (a CpuInfo), ``.variants`` (every op's variant table as a
    DataFrame) and ``.mask``; shows as one HTML panel."""

    def __init__(self) -> None:
        from .. import kernels
        from ..cpu import cpu_info

        self.info = cpu_info()
        self.variants = kernels.variants()
        self.mask = self.info.mask

    def _repr_html_(self) -> str:
        info = self.info
        masked = [f for f in info.flags if f not in info.active_flags]
        mask_line = (f"<p>mask in force: <code>0x{self.mask:x}</code>, level <b>{esc(info.level)}</b>"
                     + (f"; masked off: {esc(' '.join(masked))}" if masked else "; nothing masked") + "</p>")
        rows = []
        for family, g in self.variants.groupby("family", sort=False):
            cells = []
            for r in g.to_dict("records"):
                if r["selected"]:
                    style = "background:#2b7a0b;color:white"
                elif r["active"]:
                    style = "background:#cfe8c4"
                elif r["runnable"]:
                    style = "background:#eee;color:#555"
                else:
                    style = "background:#eee;color:#aaa;text-decoration:line-through"
                cells.append(f"<span style='{style};border-radius:4px;padding:1px 5px;margin:1px;"
                             f"display:inline-block' title='isa {esc(r['isa'])}'>{esc(r['variant'])}</span>")
            rows.append(f"<tr><th style='text-align:left;padding-right:1em'>{esc(family)}</th>"
                        f"<td style='text-align:left'>{' '.join(cells)}</td></tr>")
        legend = ("<p style='font-size:11px'>green: dispatched; light green: allowed by the mask; "
                  "grey: masked off; struck out: this CPU cannot run it</p>")
        return (info._repr_html_() + mask_line
                + f"<table>{''.join(rows)}</table>" + legend)

    def __repr__(self) -> str:
        return str(self.info)
