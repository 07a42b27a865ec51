package dev.fairway.samples.lab;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs the lab: every chosen scenario for every chosen strategy (and through every chosen client,
 * the clients of one scenario x strategy one right after the other, so that they see the machine in
 * the same state), one run after the other (each run owns the machine), then prints the tables and
 * writes the CSV and the HTML report.
 */
public final class Lab {
  /** Kept strongly reachable: java.util.logging holds loggers weakly, and the level would be lost. */
  private static final Logger FAIRWAY_LOG = Logger.getLogger("dev.fairway");

  private final LabOptions options;
  private final PrintStream out;
  private final PrintStream progress;

  public Lab(LabOptions options, PrintStream out, PrintStream progress) {
    this.options = options;
    this.out = out;
    this.progress = progress;
  }

  /** Entry point of {@code fairway-samples.jar lab ...}. */
  public static void main(String... args) throws Exception {
    LabOptions options;
    try {
      options = LabOptions.parse(args);
    } catch (LabOptions.UsageException e) {
      if (e.getMessage() != null) {
        System.err.println(e.getMessage());
      }
      System.err.println(LabOptions.usage());
      System.exit(e.getMessage() == null ? 0 : 2);
      return;
    }
    new Lab(options, System.out, System.err).runAndReport();
  }

  /** Runs everything and writes every output; returns the results in run order. */
  public List<RunResult> runAndReport() throws IOException, InterruptedException {
    out.println("Fairway scenario lab: " + options);
    if (options.quickProfile) {
      out.println("(quick profile; --time-scale 1.0 --duration 30s reproduces the article's wall clock)");
    }
    List<RunResult> results = run();
    List<RollingRun.Result> rolling = options.scenarios().contains(Scenario.ROLLING)
        ? RollingLab.run(options, progress) : List.of();
    SubsetSocketLab.Result subset = options.scenarios().contains(Scenario.SUBSET) ? runSubset() : null;
    KubernetesLab.Results kubernetes = options.scenarios().contains(Scenario.KUBERNETES)
        ? KubernetesLab.run(options, progress) : null;
    List<ReportsLab.Cell> reports = options.scenarios().contains(Scenario.REPORTS)
        ? new ReportsLab(options, progress).run() : List.of();
    out.println();
    for (Scenario scenario : options.scenarios()) {
      List<RunResult> rows = rowsOf(results, scenario);
      if (!rows.isEmpty()) {
        out.println(ResultTables.table(scenario, rows, options));
      }
    }
    if (!rolling.isEmpty()) {
      out.println(RollingLab.table(rolling, options));
      if (options.csv != null) {
        Path file = RollingLab.csvFile(options.csv, options);
        RollingLab.writeCsv(file, rolling, options);
        out.println("CSV (rolling): " + file.toAbsolutePath());
      }
    }
    if (subset != null) {
      out.println(SubsetSocketLab.table(subset, options));
    }
    if (kubernetes != null) {
      out.println(KubernetesLab.table(kubernetes, options));
    }
    if (!reports.isEmpty()) {
      out.println(ReportsLab.table(reports, options));
    }
    if (options.csv != null && !results.isEmpty()) {
      ResultTables.writeCsv(options.csv, results);
      out.println("CSV: " + options.csv.toAbsolutePath());
    }
    if (options.report != null && !results.isEmpty()) {
      HtmlReport.write(options.report, results, options);
      out.println("Report: " + options.report.toAbsolutePath());
    }
    return results;
  }

  /** {@link Scenario#SUBSET}, with the balancers' lines (a window per client) held back as in {@link #run()}. */
  private SubsetSocketLab.Result runSubset() throws IOException, InterruptedException {
    Level previous = FAIRWAY_LOG.getLevel();
    FAIRWAY_LOG.setLevel(Level.SEVERE);
    try {
      return new SubsetSocketLab(options).run(progress);
    } finally {
      FAIRWAY_LOG.setLevel(previous);
    }
  }

  /** Runs every scenario x strategy, with a progress line on the progress stream. */
  public List<RunResult> run() throws IOException, InterruptedException {
    Level previous = FAIRWAY_LOG.getLevel();
    // Ejections and health changes are what the lab provokes on purpose; their log lines would
    // only bury the progress line. Errors still show.
    FAIRWAY_LOG.setLevel(Level.SEVERE);
    try {
      List<RunResult> results = new ArrayList<>();
      int total = (int) options.scenarios().stream().filter(sc -> !sc.runsApart()).count()
          * options.strategies().size() * options.clientKinds().size();
      double planned = plannedSeconds(options);
      boolean console = System.console() != null;
      if (total > 0 || options.scenarios().contains(Scenario.ROLLING)
          || options.scenarios().contains(Scenario.KUBERNETES)) {
        for (LabClient.Kind kind : options.clientKinds()) {
          warmUpJvm(options.forClient(kind)); // (subset alone counts connections and calls, not times: no warm-up)
        }
      }
      long started = System.nanoTime();
      int index = 0;
      for (Scenario scenario : options.scenarios()) {
        if (scenario.runsApart()) {
          continue; // its own runs and table: RollingLab, SubsetSocketLab
        }
        for (String strategy : options.strategies()) {
          for (LabClient.Kind kind : options.clientKinds()) {
            index++;
            Progress line = new Progress(scenario, strategy, kind, index, total, started, planned, console);
            line.print();
            results.add(new ScenarioRun(options.forClient(kind), scenario, strategy).run(line::tick));
          }
        }
      }
      if (console) {
        progress.print('\r' + " ".repeat(100) + '\r');
      }
      progress.printf(Locale.ROOT, "lab: %d runs in %.1f s%n", total, (System.nanoTime() - started) / 1e9);
      return results;
    } finally {
      FAIRWAY_LOG.setLevel(previous);
    }
  }

  /**
   * What the progress line expects the runs to take, in seconds: per run the warm-up, the window and
   * about 0.7 s of setup, teardown and calls still out at the window's end, plus {@value
   * #SECONDS_PER_CLIENT} s for each client beyond the first (its balancer, health checker and OkHttp
   * client are built and closed), plus recovery's tail of about a quarter window.
   */
  static double plannedSeconds(LabOptions options) {
    double perRun = options.warmUp().toNanos() / 1e9 + options.duration().toNanos() / 1e9 + 0.7;
    double planned = 0;
    for (Scenario scenario : options.scenarios()) {
      if (scenario.runsApart()) {
        continue; // not a scenario x strategy run
      }
      for (LabClient.Kind kind : options.clientKinds()) {
        double perClient = kind == LabClient.Kind.SPRING ? SpringLabClient.SECONDS_PER_CLIENT : SECONDS_PER_CLIENT;
        double run = perRun + perClient * (options.clients(scenario) - 1);
        if (scenario == Scenario.RECOVERY) {
          run += options.duration().toNanos() / 1e9 / 4;
        }
        planned += run * options.strategies().size();
      }
    }
    return planned;
  }

  /** Setup and teardown of one more client (balancer, health checker, OkHttp client), in seconds. */
  static final double SECONDS_PER_CLIENT = 0.03;

  /**
   * One unreported run before the first measured one, so the JIT has compiled the client and server
   * paths: without it the first scenario x strategy runs on a cold JVM and looks several times slower.
   * It runs {@link #WARM_UP_SECONDS} s at time scale 0.2 at most, whatever the measured runs' scale:
   * the JIT counts calls, not seconds, so the warm-up is sized in calls at the busiest scale. Half of
   * it left a single user's calls still visibly slower than their service time in the first runs.
   */
  static final int WARM_UP_SECONDS = 3;

  /** Warms up the call path of {@code options}' client (one of the run's). */
  private void warmUpJvm(LabOptions options) throws IOException, InterruptedException {
    LabOptions warm = LabOptions.builder()
        .timeScale(Math.min(0.2, options.timeScale()))
        .duration(java.time.Duration.ofSeconds(WARM_UP_SECONDS))
        .workers(options.workers())
        .loadReports(options.loadReports())
        .client(options.client())
        .build();
    progress.println("lab: warming up the JVM" + (this.options.clientKinds().size() > 1 ? " for " + options.client().id() : ""));
    for (String strategy : warmUpStrategies(options)) {
      new ScenarioRun(warm, Scenario.STEADY, strategy).run(() -> {});
    }
  }

  /**
   * Through OkHttp, the JDK client or HttpClient 5, one warm-up run with least connections; through
   * Spring, one with each balancer the runs use (Spring Cloud LoadBalancer's own, Fairway's through
   * the starter): their call paths differ from the RestClient on.
   */
  static List<String> warmUpStrategies(LabOptions options) {
    if (options.client() != LabClient.Kind.SPRING) {
      return List.of("least-connections");
    }
    List<String> strategies = new ArrayList<>();
    options.strategies().stream().filter(SpringLabClient.SPRING_STRATEGIES::contains).findFirst().ifPresent(strategies::add);
    options.strategies().stream().filter(n -> !SpringLabClient.SPRING_STRATEGIES.contains(n)).findFirst()
        .ifPresent(strategies::add);
    return strategies;
  }

  static List<RunResult> rowsOf(List<RunResult> results, Scenario scenario) {
    List<RunResult> rows = new ArrayList<>();
    for (RunResult r : results) {
      if (r.scenario == scenario) {
        rows.add(r);
      }
    }
    return rows;
  }

  /** The progress line: scenario, strategy, run i of n, elapsed / planned. */
  private final class Progress {
    private final Scenario scenario;
    private final String strategy;
    private final LabClient.Kind client;
    private final int index;
    private final int total;
    private final long started;
    private final double planned;
    private final boolean console;
    private long lastPrint;

    Progress(Scenario scenario, String strategy, LabClient.Kind client, int index, int total, long started, double planned,
        boolean console) {
      this.scenario = scenario;
      this.strategy = strategy;
      this.client = client;
      this.index = index;
      this.total = total;
      this.started = started;
      this.planned = planned;
      this.console = console;
    }

    void tick() {
      long now = System.nanoTime();
      if (console && now - lastPrint > 250_000_000L) {
        print();
      }
    }

    void print() {
      lastPrint = System.nanoTime();
      String text = String.format(Locale.ROOT, "lab %-9s %-21s%s run %2d/%d  elapsed %5.1f s / ~%.0f s",
          scenario.id(), strategy, options.clientKinds().size() > 1 ? String.format(Locale.ROOT, " %-6s", client.id()) : "",
          index, total, (lastPrint - started) / 1e9, planned);
      if (console) {
        progress.print('\r' + text);
        progress.flush();
      } else {
        progress.println(text);
      }
    }
  }
}
