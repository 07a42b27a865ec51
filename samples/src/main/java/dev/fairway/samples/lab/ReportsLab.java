package dev.fairway.samples.lab;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The {@code reports} scenario: do load reports ever hurt? For every strategy that reads them, at 1
 * and at 50 clients, 100 users as in {@code steady}, these conditions, each {@code --runs} times:
 *
 * <ul>
 *   <li>no reports;
 *   <li>every backend honest, in three styles: A (the answered request counted, utilization capped
 *       at 1, no {@code workers}), B (the lab's own: not counted, uncapped, {@code workers} named),
 *       and the starter's filter on Tomcat's 200 threads ({@link LoadReportStyle#TOMCAT}). Whether
 *       {@code workers} is named makes no difference to the balancer, which reads utilization and
 *       rif only, so A stands for both;
 *   <li>backend-4 (the slowest) lying while the others report in style B: rif 1 at utilization
 *       0.000001, rif 0 at utilization 0, or frozen at an idle report.
 * </ul>
 *
 * <p>One table: per cell the median of the runs' throughput (share of the limit), p99, and backend-4's
 * share of the calls over its share of the capacity, with every run's throughput beside it.
 */
final class ReportsLab {
  /** The strategies that read load reports. */
  static final List<String> READERS = List.of("least-queueing", "least-connections", "power-of-two-choices");
  static final int[] CLIENTS = {1, 50};

  /** One condition: how the honest backends report (null: no reports) and what backend-4 does instead. */
  record Condition(String name, LoadReportStyle style, LoadReportStyle liar) {}

  /** One cell's runs. */
  record Cell(String strategy, int clients, Condition condition, List<RunResult> runs) {}

  private final LabOptions options;
  private final PrintStream progress;

  ReportsLab(LabOptions options, PrintStream progress) {
    this.options = options;
    this.progress = progress;
  }

  static List<Condition> conditions(int workers) {
    LoadReportStyle a = LoadReportStyle.parse("capped,rif-counts-answered,no-workers");
    LoadReportStyle b = LoadReportStyle.HONEST;
    return List.of(
        new Condition("none", null, null),
        new Condition("honest A", a, null),
        new Condition("honest B", b, null),
        new Condition("honest tomcat-200", LoadReportStyle.TOMCAT, null),
        new Condition("liar rif=1", b, LoadReportStyle.LIAR),
        new Condition("liar rif=0", b, LoadReportStyle.LIAR_ZERO),
        new Condition("frozen", b, LoadReportStyle.frozen(b, workers)));
  }

  /** The conditions' names, in the table's order ({@code --cells} takes them). */
  static final List<String> CONDITION_NAMES = conditions(8).stream().map(Condition::name).toList();

  /** Whether the run's {@code --cells} keeps condition {@code c} at {@code clients} clients. */
  static boolean chosen(LabOptions options, int clients, Condition c) {
    if (!options.onlyCells.isEmpty()) {
      return options.onlyCells.contains(c.name());
    }
    return !options.coreCells || core(clients, c);
  }

  /**
   * The cells {@code --cells core} keeps, for a loaded machine: at 1 client the honest styles (where
   * reports hurt most), at 50 the honest lab style and every liar (where liars hurt most); both with
   * no reports beside them.
   */
  static boolean core(int clients, Condition c) {
    if (c.liar() == null) {
      return clients == 1 || c.style() == null || c.style() == LoadReportStyle.HONEST;
    }
    return clients > 1;
  }

  /** The strategies of the run that read reports; all of {@link #READERS} if none was chosen. */
  static List<String> strategies(LabOptions options) {
    List<String> chosen = options.strategies().stream().filter(READERS::contains).toList();
    return chosen.isEmpty() ? READERS : chosen;
  }

  List<Cell> run() throws IOException, InterruptedException {
    Logger log = Logger.getLogger("dev.fairway");
    Level previous = log.getLevel();
    log.setLevel(Level.SEVERE);
    try {
      List<String> strategies = strategies(options);
      int[] clientCounts = options.clients != null ? new int[] {options.clients} : CLIENTS;
      List<Condition> conditions = conditions(options.workers());
      int total = 0;
      LabOptions warm = options.forReportsCell(1, true, LoadReportStyle.HONEST, null);
      new ScenarioRun(warm, Scenario.STEADY, strategies.get(0)).run(() -> {}); // warms the JVM; not counted
      List<Cell> cells = new ArrayList<>();
      for (String strategy : strategies) {
        for (int k : clientCounts) {
          for (Condition c : conditions) {
            if (!chosen(options, k, c)) {
              continue;
            }
            cells.add(new Cell(strategy, k, c, new ArrayList<>()));
          }
        }
      }
      total = cells.size() * options.runs;
      progress.printf(Locale.ROOT, "lab: reports, %d runs of %.1f s%n", total, options.duration().toMillis() / 1e3);
      int done = 0;
      // Run by run across every cell, so that a change in the machine's load hits every cell alike.
      for (int r = 0; r < options.runs; r++) {
        for (Cell cell : cells) {
          Condition c = cell.condition();
          LabOptions o = options.forReportsCell(cell.clients(), c.style() != null, c.style() != null ? c.style()
              : LoadReportStyle.HONEST, c.liar());
          cell.runs().add(new ScenarioRun(o, Scenario.STEADY, cell.strategy()).run(() -> {}));
          done++;
          progress.printf(Locale.ROOT, "lab: reports %d/%d %s, %d clients, %s%n", done, total, cell.strategy(),
              cell.clients(), c.name());
        }
      }
      return cells;
    } finally {
      log.setLevel(previous);
    }
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  /** The table: one row per cell. */
  static String table(List<Cell> cells, LabOptions options) {
    double capacity = LiarShare.capacityShare(options.serviceSeconds(), Scenario.LIAR_BACKEND);
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "reports: 100 users, %s runs per cell; median of the runs (every run's share in brackets)%n",
        options.runs));
    sb.append(String.format(Locale.ROOT, "%-21s %7s  %-21s %8s %-22s %9s %14s%n", "strategy", "clients", "reports",
        "share", "(runs)", "p99 ms", "b4 / capacity"));
    for (Cell cell : cells) {
      int n = cell.runs().size();
      double[] share = new double[n];
      double[] p99 = new double[n];
      double[] b4 = new double[n];
      for (int i = 0; i < n; i++) {
        RunResult r = cell.runs().get(i);
        share[i] = r.shareOfLimit();
        p99[i] = r.p99Ms;
        b4[i] = r.backendShare(Scenario.LIAR_BACKEND) / capacity;
      }
      StringBuilder runs = new StringBuilder("(");
      for (int i = 0; i < n; i++) {
        runs.append(i == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.2f", share[i]));
      }
      runs.append(')');
      sb.append(String.format(Locale.ROOT, "%-21s %7d  %-21s %8.3f %-22s %9.0f %13.2fx%n", cell.strategy(),
          cell.clients(), cell.condition().name(), median(share), runs, median(p99), median(b4)));
    }
    return sb.toString();
  }
}
