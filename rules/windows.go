package rules

import "time"

// MaxWindows is how many longer windows a signal may declare: each adds
// two parts to the signal's one query and a column to every snapshot.
const MaxWindows = 4

// WindowName writes a window as PromQL does: 5m, 90s as 1m30s, 1h.
func WindowName(w time.Duration) string { return FormatDuration(w) }

// WindowColumn is the snapshot column of signal's samples over window w:
// "soft_fail_ratio@15m".
func WindowColumn(signal string, w time.Duration) string { return signal + "@" + WindowName(w) }

// WindowPart is the rules.PartLabel value of part (PartValue or
// PartEvidence) over window w in a TickQuery: "value_15m", "evidence_15m".
func WindowPart(part string, w time.Duration) string { return part + "_" + WindowName(w) }

// Columns are the columns of a snapshot of signals: each signal's name in
// order, then each signal's window columns (WindowColumn) in signal and
// window order. Collect fills them and the core reads them in this order.
func Columns(signals []SignalConfig) []string {
	out := make([]string, 0, len(signals))
	for _, s := range signals {
		out = append(out, s.Name)
	}
	for _, s := range signals {
		for _, w := range s.Windows {
			out = append(out, WindowColumn(s.Name, w))
		}
	}
	return out
}
