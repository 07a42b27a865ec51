package dev.fairway.samples.lab;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * {@code lab-report.html}: one self-contained page (inline CSS and SVG, no scripts, nothing fetched)
 * with, per scenario, throughput against the limit for every strategy, each strategy's split over
 * the backends, its latency percentiles, and for the scenarios with a fault (failure, recovery,
 * slowdown, fastfail) the errors and calls per second over time (and backend-1's share over time in
 * recovery).
 */
final class HtmlReport {
  static final String[] STRATEGY_COLORS = {
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"
  };
  static final String[] BACKEND_COLORS = {"#2b6cb0", "#38a169", "#d69e2e", "#c53030"};
  private static final int WIDTH = 960;
  private static final int LABEL = 190;
  private static final int PLOT = 600;
  private static final int ROW = 26;
  private static final int TOP = 34;

  private HtmlReport() {}

  static void write(Path file, List<RunResult> results, LabOptions options) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(file, render(results, options), StandardCharsets.UTF_8);
  }

  static String render(List<RunResult> results, LabOptions options) {
    StringBuilder h = new StringBuilder(64 * 1024);
    h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
        .append("<title>Fairway scenario lab</title>\n<style>\n")
        .append("body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px;color:#1a202c;background:#fff}\n")
        .append("h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 4px;border-top:1px solid #e2e8f0;padding-top:16px}\n")
        .append("h3{font-size:14px;margin:14px 0 2px;color:#4a5568}p.meta{color:#4a5568;margin:2px 0}\n")
        .append("svg{display:block;margin:4px 0 8px}svg text{font:12px system-ui,sans-serif;fill:#1a202c}\n")
        .append("svg .axis{stroke:#a0aec0;stroke-width:1}svg .grid{stroke:#edf2f7;stroke-width:1}\n")
        .append("svg .limit{stroke:#c53030;stroke-width:2;stroke-dasharray:6 4}svg .event{stroke:#4a5568;stroke-width:1.5;stroke-dasharray:4 3}\n")
        .append("table{border-collapse:collapse;margin:6px 0 10px;font-size:12px}td,th{padding:3px 8px;border-bottom:1px solid #e2e8f0;text-align:right}\n")
        .append("td:first-child,th:first-child{text-align:left}th{background:#f7fafc}\n")
        .append("</style></head><body>\n");
    h.append("<h1>Fairway scenario lab</h1>\n");
    h.append("<p class=\"meta\">").append(esc(options.toString())).append(". Service times ");
    double[] s = options.serviceSeconds();
    for (int i = 0; i < s.length; i++) {
      h.append(i == 0 ? "" : " / ").append(fmt(s[i] * 1000, 1));
    }
    h.append(" ms. Generated ").append(Instant.now()).append(".</p>\n");
    h.append("<p class=\"meta\">The limit (red dashed line) is the most any router could get: the sum of 1/S over the "
        + "min(N, total workers) fastest workers, averaged over the window where N or the backends change (a dead or "
        + "fast-failing backend adds nothing, a slowed one counts at its new service time).</p>\n");
    for (Scenario scenario : options.scenarios()) {
      List<RunResult> rows = Lab.rowsOf(results, scenario);
      if (!rows.isEmpty()) {
        section(h, scenario, rows, options);
      }
    }
    h.append("</body></html>\n");
    return h.toString();
  }

  private static void section(StringBuilder h, Scenario scenario, List<RunResult> rows, LabOptions options) {
    RunResult first = rows.get(0);
    h.append("<section id=\"scenario-").append(scenario.id()).append("\">\n");
    h.append("<h2>").append(scenario.id()).append(": ").append(esc(scenario.shape())).append("</h2>\n");
    h.append("<p class=\"meta\">limit ").append(fmt(first.limitRps, 1)).append(" rps over ")
        .append(fmt(first.measuredSeconds, 1)).append(" s measured; ").append(first.users).append(" users over ")
        .append(first.clients).append(first.clients == 1 ? " client" : " independent clients").append("</p>\n");
    h.append("<h3>Throughput against the limit</h3>\n");
    throughput(h, scenario, rows);
    h.append("<h3>Share of calls per backend (backend-1 fastest ... backend-4 slowest)</h3>\n");
    shares(h, scenario, rows);
    h.append("<h3>Latency: p50, p95, p99 (ms), mean marked</h3>\n");
    latency(h, scenario, rows);
    if (scenario.hasFault()) {
      h.append("<h3>Caller-visible errors over time (").append(faultName(scenario)).append(" at the first dashed line")
          .append(scenario == Scenario.RECOVERY ? ", back at the second" : "").append(")</h3>\n");
      overTime(h, scenario, rows, Series.ERRORS);
      h.append("<h3>Successful calls per second over time</h3>\n");
      overTime(h, scenario, rows, Series.THROUGHPUT);
      if (scenario == Scenario.RECOVERY) {
        h.append("<h3>Backend-1's share of calls over time</h3>\n");
        overTime(h, scenario, rows, Series.SHARE_OF_ONE);
      }
    }
    table(h, scenario, rows, options);
    h.append("</section>\n");
  }

  private static String faultName(Scenario scenario) {
    switch (scenario) {
      case SLOWDOWN:
        return "backend-1 " + Scenario.SLOWDOWN_FACTOR + "x slower";
      case FASTFAIL:
        return "backend-2 answers 503";
      default:
        return "backend-1 killed";
    }
  }

  private static void throughput(StringBuilder h, Scenario scenario, List<RunResult> rows) {
    double limit = rows.get(0).limitRps;
    double max = limit;
    for (RunResult r : rows) {
      max = Math.max(max, r.throughputRps());
    }
    max = niceCeil(max * 1.08);
    int height = TOP + rows.size() * ROW + 10;
    svgOpen(h, "chart throughput", scenario, height);
    axisX(h, max, TOP - 6, height - 6, " rps");
    for (int i = 0; i < rows.size(); i++) {
      RunResult r = rows.get(i);
      int y = TOP + i * ROW;
      double w = PLOT * r.throughputRps() / max;
      rowLabel(h, name(r, rows), y);
      h.append("<rect class=\"bar\" data-strategy=\"").append(esc(r.strategy)).append("\" x=\"").append(LABEL)
          .append("\" y=\"").append(y + 4).append("\" width=\"").append(fmt(Math.max(1, w), 1))
          .append("\" height=\"").append(ROW - 8).append("\" fill=\"").append(color(r.strategy)).append("\"><title>")
          .append(esc(r.strategy)).append(": ").append(fmt(r.throughputRps(), 1)).append(" rps</title></rect>\n");
      h.append("<text x=\"").append(fmt(LABEL + w + 6, 1)).append("\" y=\"").append(y + ROW / 2 + 4).append("\">")
          .append(fmt(r.throughputRps(), 0)).append(" rps, ").append(fmt(100 * r.shareOfLimit(), 0))
          .append("%</text>\n");
    }
    double lx = LABEL + PLOT * limit / max;
    h.append("<line class=\"limit\" x1=\"").append(fmt(lx, 1)).append("\" x2=\"").append(fmt(lx, 1))
        .append("\" y1=\"").append(TOP - 4).append("\" y2=\"").append(height - 8).append("\"/>\n");
    h.append("<text x=\"").append(fmt(lx, 1)).append("\" y=\"").append(12).append("\" text-anchor=\"middle\" fill=\"#c53030\">limit ")
        .append(fmt(limit, 0)).append(" rps</text>\n");
    h.append("</svg>\n");
  }

  private static void shares(StringBuilder h, Scenario scenario, List<RunResult> rows) {
    int height = TOP + rows.size() * ROW + 10;
    svgOpen(h, "chart share", scenario, height);
    for (int b = 0; b < 4; b++) {
      int x = LABEL + b * 110;
      h.append("<rect x=\"").append(x).append("\" y=\"6\" width=\"12\" height=\"12\" fill=\"").append(BACKEND_COLORS[b])
          .append("\"/><text x=\"").append(x + 16).append("\" y=\"16\">backend-").append(b + 1).append("</text>\n");
    }
    for (int i = 0; i < rows.size(); i++) {
      RunResult r = rows.get(i);
      int y = TOP + i * ROW;
      rowLabel(h, name(r, rows), y);
      double x = LABEL;
      for (int b = 0; b < 4; b++) {
        double w = PLOT * r.backendShare(b);
        if (w <= 0) {
          continue;
        }
        h.append("<rect class=\"seg\" data-backend=\"").append(b + 1).append("\" x=\"").append(fmt(x, 1))
            .append("\" y=\"").append(y + 4).append("\" width=\"").append(fmt(w, 1)).append("\" height=\"")
            .append(ROW - 8).append("\" fill=\"").append(BACKEND_COLORS[b]).append("\"><title>backend-").append(b + 1)
            .append(": ").append(r.perBackend[b]).append(" calls</title></rect>\n");
        if (w >= 34) {
          h.append("<text x=\"").append(fmt(x + w / 2, 1)).append("\" y=\"").append(y + ROW / 2 + 4)
              .append("\" text-anchor=\"middle\" style=\"fill:#fff\">").append(fmt(100 * r.backendShare(b), 0))
              .append("%</text>\n");
        }
        x += w;
      }
    }
    h.append("</svg>\n");
  }

  private static void latency(StringBuilder h, Scenario scenario, List<RunResult> rows) {
    double max = 0;
    for (RunResult r : rows) {
      max = Math.max(max, r.p99Ms);
    }
    max = niceCeil(Math.max(1, max) * 1.05);
    int height = TOP + rows.size() * ROW + 10;
    svgOpen(h, "chart latency", scenario, height);
    axisX(h, max, TOP - 6, height - 6, " ms");
    String[] shades = {"#90cdf4", "#4299e1", "#2a4365"};
    String[] names = {"p50", "p95", "p99"};
    for (int k = 0; k < 3; k++) {
      int x = WIDTH - 150 + k * 48;
      h.append("<rect x=\"").append(x).append("\" y=\"2\" width=\"10\" height=\"10\" fill=\"").append(shades[k])
          .append("\"/><text x=\"").append(x + 13).append("\" y=\"11\">").append(names[k]).append("</text>\n");
    }
    for (int i = 0; i < rows.size(); i++) {
      RunResult r = rows.get(i);
      int y = TOP + i * ROW;
      rowLabel(h, name(r, rows), y);
      double[] values = {r.p50Ms, r.p95Ms, r.p99Ms};
      for (int k = 0; k < 3; k++) {
        double w = Math.max(1, PLOT * values[k] / max);
        h.append("<rect class=\"pct\" x=\"").append(LABEL).append("\" y=\"").append(y + 3 + k * 6)
            .append("\" width=\"").append(fmt(w, 1)).append("\" height=\"6\" fill=\"").append(shades[k])
            .append("\"><title>").append(names[k]).append(' ').append(fmt(values[k], 1)).append(" ms</title></rect>\n");
      }
      double mx = LABEL + PLOT * r.meanMs / max;
      h.append("<line x1=\"").append(fmt(mx, 1)).append("\" x2=\"").append(fmt(mx, 1)).append("\" y1=\"")
          .append(y + 1).append("\" y2=\"").append(y + ROW - 4).append("\" stroke=\"#c05621\" stroke-width=\"2\"><title>mean ")
          .append(fmt(r.meanMs, 1)).append(" ms</title></line>\n");
      h.append("<text x=\"").append(fmt(LABEL + PLOT * r.p99Ms / max + 6, 1)).append("\" y=\"").append(y + ROW / 2 + 4)
          .append("\">").append(fmt(r.p50Ms, 0)).append(" / ").append(fmt(r.p95Ms, 0)).append(" / ")
          .append(fmt(r.p99Ms, 0)).append(" ms</text>\n");
    }
    h.append("</svg>\n");
  }

  private enum Series { ERRORS, THROUGHPUT, SHARE_OF_ONE }

  /** Lines over time, one per strategy: errors per second, successes per second, or backend-1's share. */
  private static void overTime(StringBuilder h, Scenario scenario, List<RunResult> rows, Series series) {
    boolean shareOfOne = series == Series.SHARE_OF_ONE;
    RunResult first = rows.get(0);
    int buckets = first.seriesErrors.length;
    double observed = 0;
    for (RunResult r : rows) {
      observed = Math.max(observed, r.observedSeconds);
    }
    double seconds = Math.min(buckets * first.bucketSeconds, Math.max(first.measuredSeconds, observed));
    double[][] values = new double[rows.size()][buckets];
    double max = 0;
    for (int i = 0; i < rows.size(); i++) {
      RunResult r = rows.get(i);
      for (int b = 0; b < buckets; b++) {
        long all = 0;
        for (long n : r.seriesPerBackend[b]) {
          all += n;
        }
        double v;
        switch (series) {
          case SHARE_OF_ONE:
            v = all == 0 ? 0 : 100.0 * r.seriesPerBackend[b][0] / all;
            break;
          case THROUGHPUT:
            v = all / r.bucketSeconds;
            break;
          default:
            v = r.seriesErrors[b] / r.bucketSeconds;
        }
        values[i][b] = v;
        max = Math.max(max, v);
      }
    }
    double maxRaw = max;
    max = shareOfOne ? 100 : niceCeil(Math.max(1, max) * 1.1);
    int plotH = 200;
    int top = 20;
    int left = 70;
    int plotW = WIDTH - left - 200;
    int height = top + plotH + 40;
    svgOpen(h, series == Series.SHARE_OF_ONE ? "chart recovery" : series == Series.ERRORS ? "chart errors" : "chart rate",
        scenario, height);
    if (series == Series.ERRORS && maxRaw == 0) {
      h.append("<text x=\"").append(left + 12).append("\" y=\"").append(top + plotH / 2)
          .append("\" style=\"font-size:14px;fill:#2f855a\">no caller-visible errors with any strategy</text>\n");
    }
    for (double t : ticks(max)) {
      double y = top + plotH - plotH * t / max;
      h.append("<line class=\"grid\" x1=\"").append(left).append("\" x2=\"").append(left + plotW).append("\" y1=\"")
          .append(fmt(y, 1)).append("\" y2=\"").append(fmt(y, 1)).append("\"/><text x=\"").append(left - 6)
          .append("\" y=\"").append(fmt(y + 4, 1)).append("\" text-anchor=\"end\">").append(fmt(t, t < 10 ? 1 : 0))
          .append(shareOfOne ? "%" : "/s").append("</text>\n");
    }
    for (double t : ticks(seconds)) {
      double x = left + plotW * t / seconds;
      h.append("<text x=\"").append(fmt(x, 1)).append("\" y=\"").append(top + plotH + 16)
          .append("\" text-anchor=\"middle\">").append(fmt(t, t < 10 ? 1 : 0)).append(" s</text>\n");
    }
    h.append("<line class=\"axis\" x1=\"").append(left).append("\" x2=\"").append(left + plotW).append("\" y1=\"")
        .append(top + plotH).append("\" y2=\"").append(top + plotH).append("\"/>\n");
    for (double event : new double[] {first.faultAtSeconds, first.restartAtSeconds}) {
      if (!Double.isNaN(event)) {
        double x = left + plotW * event / seconds;
        h.append("<line class=\"event\" x1=\"").append(fmt(x, 1)).append("\" x2=\"").append(fmt(x, 1))
            .append("\" y1=\"").append(top).append("\" y2=\"").append(top + plotH).append("\"/>\n");
      }
    }
    double windowEnd = first.measuredSeconds;
    if (windowEnd < seconds - first.bucketSeconds) {
      double x = left + plotW * windowEnd / seconds;
      h.append("<line class=\"axis\" x1=\"").append(fmt(x, 1)).append("\" x2=\"").append(fmt(x, 1))
          .append("\" y1=\"").append(top).append("\" y2=\"").append(top + plotH)
          .append("\"/><text x=\"").append(fmt(x + 4, 1)).append("\" y=\"").append(top + 10)
          .append("\">end of measured window</text>\n");
    }
    for (int i = 0; i < rows.size(); i++) {
      RunResult r = rows.get(i);
      h.append("<polyline class=\"series\" data-strategy=\"").append(esc(r.strategy))
          .append("\" fill=\"none\" stroke-width=\"1.8\" stroke=\"").append(color(r.strategy)).append("\" points=\"");
      int lastBucket = Math.min(buckets, (int) Math.floor(r.observedSeconds / r.bucketSeconds));
      for (int b = 0; b < lastBucket; b++) {
        double x = left + plotW * (b + 0.5) * r.bucketSeconds / seconds;
        double y = top + plotH - plotH * values[i][b] / max;
        h.append(fmt(x, 1)).append(',').append(fmt(y, 1)).append(' ');
      }
      h.append("\"/>\n");
      int ly = top + 6 + i * 18;
      h.append("<line x1=\"").append(left + plotW + 14).append("\" x2=\"").append(left + plotW + 34).append("\" y1=\"")
          .append(ly).append("\" y2=\"").append(ly).append("\" stroke-width=\"3\" stroke=\"").append(color(r.strategy))
          .append("\"/><text x=\"").append(left + plotW + 40).append("\" y=\"").append(ly + 4).append("\">")
          .append(esc(name(r, rows))).append("</text>\n");
    }
    h.append("</svg>\n");
  }

  /** The row's strategy, and its client where the rows compare clients ({@code --client okhttp,jdk}). */
  private static String name(RunResult r, List<RunResult> rows) {
    boolean clients = rows.stream().map(x -> x.client).distinct().count() > 1;
    return ResultTables.label(r, clients);
  }

  private static void table(StringBuilder h, Scenario scenario, List<RunResult> rows, LabOptions options) {
    h.append("<table><tr><th>strategy</th><th>rps</th><th>% of limit</th><th>mean ms</th><th>p50 ms</th>"
        + "<th>p95 ms</th><th>p99 ms</th><th>errors</th><th>retries</th><th>per backend</th>");
    if (scenario.killsBackend()) {
      h.append("<th>in flight to backend-1 at kill</th>");
    }
    if (scenario == Scenario.RECOVERY) {
      h.append("<th>backend-1 back to its share</th>");
    }
    if (scenario == Scenario.FASTFAIL) {
      h.append("<th>requests reaching backend-2 after the first second of the fault</th>");
    }
    h.append("</tr>\n");
    for (RunResult r : rows) {
      h.append("<tr><td>").append(esc(name(r, rows))).append("</td><td>").append(fmt(r.throughputRps(), 1))
          .append("</td><td>").append(fmt(100 * r.shareOfLimit(), 1)).append("%</td><td>").append(fmt(r.meanMs, 1))
          .append("</td><td>").append(fmt(r.p50Ms, 1)).append("</td><td>").append(fmt(r.p95Ms, 1))
          .append("</td><td>").append(fmt(r.p99Ms, 1)).append("</td><td title=\"").append(esc(r.errorSummary)).append("\">").append(r.errors).append("</td><td>")
          .append(r.retries).append("</td><td>").append(ResultTables.perBackend(r)).append(" (")
          .append(ResultTables.shares(r)).append(")</td>");
      if (scenario.killsBackend()) {
        h.append("<td>").append(r.inFlightAtKill).append("</td>");
      }
      if (scenario == Scenario.RECOVERY) {
        h.append("<td>").append(esc(ResultTables.recovery(r, options))).append("</td>");
      }
      if (scenario == Scenario.FASTFAIL) {
        h.append("<td>").append(Double.isNaN(r.failingShare) ? "n/a" : fmt(100 * r.failingShare, 2) + "%")
            .append("</td>");
      }
      h.append("</tr>\n");
    }
    h.append("</table>\n");
  }

  private static void svgOpen(StringBuilder h, String cls, Scenario scenario, int height) {
    h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"").append(cls).append("\" data-scenario=\"")
        .append(scenario.id()).append("\" width=\"").append(WIDTH).append("\" height=\"").append(height)
        .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(height).append("\">\n");
  }

  private static void rowLabel(StringBuilder h, String strategy, int y) {
    h.append("<text x=\"").append(LABEL - 8).append("\" y=\"").append(y + ROW / 2 + 4)
        .append("\" text-anchor=\"end\">").append(esc(strategy)).append("</text>\n");
  }

  private static void axisX(StringBuilder h, double max, int top, int bottom, String unit) {
    for (double t : ticks(max)) {
      double x = LABEL + PLOT * t / max;
      h.append("<line class=\"grid\" x1=\"").append(fmt(x, 1)).append("\" x2=\"").append(fmt(x, 1)).append("\" y1=\"")
          .append(top).append("\" y2=\"").append(bottom).append("\"/><text x=\"").append(fmt(x, 1)).append("\" y=\"")
          .append(bottom + 2).append("\" text-anchor=\"middle\" style=\"fill:#718096;font-size:10px\">")
          .append(fmt(t, t < 10 && t != Math.rint(t) ? 1 : 0)).append(unit).append("</text>\n");
    }
  }

  /** About five round ticks from 0 to max (inclusive when max is round). */
  static double[] ticks(double max) {
    double raw = max / 5;
    double mag = Math.pow(10, Math.floor(Math.log10(raw)));
    double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    int n = (int) Math.floor(max / step + 1e-9);
    double[] out = new double[n + 1];
    for (int i = 0; i <= n; i++) {
      out[i] = i * step;
    }
    return out;
  }

  static double niceCeil(double v) {
    double mag = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10}) {
      if (m * mag >= v) {
        return m * mag;
      }
    }
    return 10 * mag;
  }

  static String color(String strategy) {
    int i = LabOptions.ALL_STRATEGIES.indexOf(strategy);
    return STRATEGY_COLORS[Math.max(0, i) % STRATEGY_COLORS.length];
  }

  static String fmt(double v, int decimals) {
    return String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
