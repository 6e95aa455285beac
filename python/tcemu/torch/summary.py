"""The summary: what ran where. Each product an emulate() context or an emulate_module wrapper
saw is counted once, by layer (the innermost module's qualified name, "" outside any), operator
and where it ran: a Route's name, or natively with the reason."""

import threading
from collections import Counter


class Summary:
    def __init__(self):
        self._lock = threading.Lock()
        self._counts = Counter()  # (layer, operator, routed: bool, route name or reason) -> n

    def record(self, layer, operator, route=None, reason=None):
        """One product of `operator` in `layer`: on `route` (a Route), or natively for `reason`."""
        key = (
            (layer, operator, True, route.name)
            if route is not None
            else (layer, operator, False, reason)
        )
        with self._lock:
            self._counts[key] += 1

    def rows(self):
        """[{layer, operator, ran, count}], ran = 'tcemu ROUTE' or 'native: REASON', sorted."""
        with self._lock:
            items = sorted(self._counts.items())
        return [
            {
                "layer": layer,
                "operator": op,
                "ran": f"tcemu {what}" if routed else f"native: {what}",
                "count": n,
            }
            for (layer, op, routed, what), n in items
        ]

    def _total(self, routed, operator, layer):
        with self._lock:
            return sum(
                n
                for (ly, op, r, _), n in self._counts.items()
                if r == routed and operator in (None, op) and layer in (None, ly)
            )

    def routed(self, operator=None, layer=None):
        """How many products ran through tcemu (of `operator`, in `layer`, where given)."""
        return self._total(True, operator, layer)

    def native(self, operator=None, layer=None):
        """How many products ran natively (of `operator`, in `layer`, where given)."""
        return self._total(False, operator, layer)

    def clear(self):
        with self._lock:
            self._counts.clear()

    def __str__(self):
        rows = self.rows()
        lines = ["| layer | operator | ran | count |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {r['layer'] or '(top)'} | {r['operator']} | {r['ran']} | {r['count']} |"
            for r in rows
        ]
        lines.append(f"{self.routed()} products through tcemu, {self.native()} native.")
        return "\n".join(lines)

    def __repr__(self):
        return f"tcemu.torch.Summary(routed={self.routed()}, native={self.native()})"
