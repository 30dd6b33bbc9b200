import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export const COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

export interface Series {
  label: string;
  values: (number | null)[];
}

/**
 * A uPlot chart over bucket times (Unix seconds). `stacked` draws each series on top of the ones
 * before it (filled); the legend then shows each series' own value, not the running sum.
 */
export function Plot({ times, series, stacked, label, unit, range }: { times: number[]; series: Series[]; stacked?: boolean; label: string; unit: (n: number) => string; range?: [number, number] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const sums = times.map(() => 0);
    const data: (number | null)[][] = series.map((s) => (stacked ? s.values.map((v, i) => (sums[i]! += v ?? 0)) : s.values));
    const own = series.map((s) => s.values);
    const dark = matchMedia("(prefers-color-scheme: dark)").matches;
    const axis = { stroke: dark ? "#c9d1d9" : "#333", grid: { stroke: dark ? "#30363d" : "#e5e5e5" }, ticks: { stroke: dark ? "#30363d" : "#e5e5e5" } };
    // Stacked: the tallest (the sum) first, so each lower band paints over the one above it.
    const order = stacked ? series.map((_, i) => series.length - 1 - i) : series.map((_, i) => i);
    const plot = new uPlot(
      {
        width: element.clientWidth,
        height: 220,
        legend: { live: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, ...(range ? { y: { range } } : {}) },
        axes: [axis, { ...axis, size: 84, values: (_u, ticks) => ticks.map(unit) }],
        series: [
          {},
          ...order.map((i) => ({
            label: series[i]!.label,
            stroke: COLORS[i % COLORS.length],
            fill: stacked ? COLORS[i % COLORS.length] + "cc" : undefined,
            width: stacked ? 1 : 2,
            points: { show: false },
            value: (_u: uPlot, _v: number | null, _s: number, idx: number | null) => (idx === null ? "–" : unit(own[i]![idx] ?? 0)),
          })),
        ],
      },
      [times, ...order.map((i) => data[i]!)] as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: 220 }));
    resize.observe(element);
    return () => (resize.disconnect(), plot.destroy());
  }, [times, series, stacked, unit, range]);
  return <div className="plot" ref={box} role="img" aria-label={label} />;
}
