package dev.fairway.samples.lab;

import dev.fairway.lb.HedgingPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The lab's command line (DESIGN.md, "The scenario lab"):
 * {@code lab [--scenario light|steady|burst|failure|recovery|fleet|slowdown|fastfail|zones|jitter|liar|rolling|subset|kubernetes|reports|all]
 * [--strategies all|NAME,NAME...] [--duration 30s] [--time-scale 1.0] [--workers 8] [--users N]
 * [--clients K] [--load-reports] [--report-style STYLE] [--csv FILE] [--report FILE.html] [--max-attempts N]
 * [--hedge p95|p99|NNms|off] [--client okhttp|jdk|hc5|spring|LIST]}.
 *
 * <p>{@code --duration} defaults to 30 s and {@code --time-scale} to 1.0, the article's wall clock.
 * When neither is given the lab uses its quick profile instead (time scale 0.2, 1.6 s measured per
 * run), so that {@code lab} with no options covers every scenario and strategy in about two minutes.
 */
public final class LabOptions {
  /** Every {@code Strategy.name()}, in the order the tables list them. */
  public static final List<String> ALL_STRATEGIES = dev.fairway.lb.Strategy.names();

  static final double QUICK_TIME_SCALE = 0.2;
  static final Duration QUICK_DURATION = Duration.ofMillis(1600);

  final List<Scenario> scenarios;
  final List<String> strategies;
  final Duration duration;
  final double timeScale;
  final int workers;
  final Integer users; // null: each scenario's own N
  final Integer clients; // null: each scenario's own K
  final boolean loadReports;
  final Path csv;
  final Path report;
  final int maxAttempts;
  final boolean quickProfile;
  final HedgingPolicy hedging; // null: no hedging
  final String hedge; // as given: "p95", "20ms"; "off"
  final LoadReportStyle reportStyle; // how honest backends word their reports (with --load-reports)
  /** The client of this options' runs: the only one of {@link #clientKinds}, or the one {@link #forClient} chose. */
  final LabClient.Kind client;
  /** Every {@code --client} of the run, in the order given; each scenario x strategy runs with each. */
  final List<LabClient.Kind> clientKinds;
  /** What backend-4 reports instead of the truth ({@link ReportsLab}'s liars); null: as the others. */
  final LoadReportStyle liar;
  /** Runs per cell ({@code --runs}, {@link ReportsLab}). */
  final int runs;
  /** {@code --cells core}: {@link ReportsLab#core} cells only. */
  final boolean coreCells;
  /** {@code --cells NAME,...}: only the conditions of these names ({@link ReportsLab#CONDITION_NAMES}); empty: all. */
  final List<String> onlyCells;

  /** A copy for one cell of {@link ReportsLab}: K clients, reports on or off, the honest style, the liar. */
  private LabOptions(LabOptions o, int clients, boolean loadReports, LoadReportStyle style, LoadReportStyle liar) {
    this.scenarios = List.of(Scenario.STEADY);
    this.client = o.client;
    this.clientKinds = o.clientKinds;
    this.strategies = o.strategies;
    this.quickProfile = o.quickProfile;
    this.duration = o.duration;
    this.timeScale = o.timeScale;
    this.workers = o.workers;
    this.users = o.users;
    this.clients = clients;
    this.loadReports = loadReports;
    this.csv = null;
    this.report = null;
    this.maxAttempts = o.maxAttempts;
    this.hedging = o.hedging;
    this.hedge = o.hedge;
    this.reportStyle = style;
    this.liar = liar;
    this.runs = o.runs;
    this.coreCells = o.coreCells;
    this.onlyCells = o.onlyCells;
  }

  LabOptions forReportsCell(int clients, boolean loadReports, LoadReportStyle style, LoadReportStyle liar) {
    return new LabOptions(this, clients, loadReports, style, liar);
  }

  /** A copy for the runs of one of {@link #clientKinds}: everything as here, {@link #client} {@code kind}. */
  private LabOptions(LabOptions o, LabClient.Kind kind) {
    this.scenarios = o.scenarios;
    this.client = kind;
    this.clientKinds = o.clientKinds;
    this.strategies = o.strategies;
    this.quickProfile = o.quickProfile;
    this.duration = o.duration;
    this.timeScale = o.timeScale;
    this.workers = o.workers;
    this.users = o.users;
    this.clients = o.clients;
    this.loadReports = o.loadReports;
    this.csv = o.csv;
    this.report = o.report;
    this.maxAttempts = o.maxAttempts;
    this.hedging = o.hedging;
    this.hedge = o.hedge;
    this.reportStyle = o.reportStyle;
    this.liar = o.liar;
    this.runs = o.runs;
    this.coreCells = o.coreCells;
    this.onlyCells = o.onlyCells;
  }

  /** These options for the runs through {@code kind}, one of {@link #clientKinds}. */
  LabOptions forClient(LabClient.Kind kind) {
    if (!clientKinds.contains(kind)) {
      throw new IllegalArgumentException("client: " + kind.id() + " (expected: one of " + clientKinds + ")");
    }
    return kind == client ? this : new LabOptions(this, kind);
  }

  private LabOptions(Builder b) {
    this.liar = null;
    this.runs = b.runs;
    this.coreCells = b.coreCells;
    this.onlyCells = List.copyOf(b.onlyCells);
    this.scenarios = List.copyOf(b.scenarios);
    this.clientKinds = List.copyOf(b.clientKinds);
    this.client = clientKinds.get(0);
    this.strategies = List.copyOf(b.strategies != null ? b.strategies : defaultStrategies(client, b.allStrategies));
    this.quickProfile = b.duration == null && b.timeScale == null;
    this.duration = b.duration != null ? b.duration : quickProfile ? QUICK_DURATION : Duration.ofSeconds(30);
    this.timeScale = b.timeScale != null ? b.timeScale : quickProfile ? QUICK_TIME_SCALE : 1.0;
    this.workers = b.workers;
    this.users = b.users;
    this.clients = b.clients;
    this.loadReports = b.loadReports;
    this.csv = b.csv;
    this.report = b.report;
    this.maxAttempts = b.maxAttempts;
    this.hedging = b.hedging;
    this.hedge = b.hedge;
    this.reportStyle = b.reportStyle;
  }

  public static Builder builder() {
    return new Builder();
  }

  public List<Scenario> scenarios() {
    return scenarios;
  }

  public List<String> strategies() {
    return strategies;
  }

  /**
   * The {@code --client} of this options' runs: OkHttp with Fairway's interceptor (default), the
   * JDK's client, Apache HttpClient 5, or Spring contexts.
   */
  public LabClient.Kind client() {
    return client;
  }

  /** Every {@code --client} of the run, in the order given (one unless a list was given). */
  public List<LabClient.Kind> clientKinds() {
    return clientKinds;
  }

  /**
   * With no {@code --strategies}: every Fairway strategy through OkHttp, the JDK client or HttpClient
   * 5; through Spring, its round robin beside Fairway's default strategy. With {@code all}: every
   * strategy the client can run.
   */
  private static List<String> defaultStrategies(LabClient.Kind client, boolean all) {
    if (client != LabClient.Kind.SPRING) {
      return ALL_STRATEGIES;
    }
    List<String> names = new ArrayList<>(client.ownStrategies());
    if (all) {
      names.addAll(ALL_STRATEGIES);
    } else {
      names.add(defaultStrategyName());
    }
    return names;
  }

  /** The strategy {@code LoadBalancer.builder()} uses when none is set (the starter's default too). */
  static String defaultStrategyName() {
    try (dev.fairway.lb.LoadBalancer probe = dev.fairway.lb.LoadBalancer.builder("default")
        .targets(dev.fairway.lb.Target.of("127.0.0.1", 1))
        .build()) {
      return probe.strategy().name();
    }
  }

  public Duration duration() {
    return duration;
  }

  public double timeScale() {
    return timeScale;
  }

  public int workers() {
    return workers;
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  /** The Fairway clients' hedging policy (okhttp, jdk and hc5), or null for none. */
  public HedgingPolicy hedging() {
    return hedging;
  }

  /** N (peak for burst) for {@code scenario}. */
  public int users(Scenario scenario) {
    return users != null ? users : scenario.defaultUsers();
  }

  /**
   * K for {@code scenario}: independent clients, each its own balancer and OkHttp client. Never more
   * than the scenario's N (a client without users would send nothing).
   */
  public int clients(Scenario scenario) {
    return Math.min(users(scenario), clients != null ? clients : scenario.defaultClients());
  }

  /** Whether the backends send ORCA load reports ({@code endpoint-load-metrics}, TEXT form). */
  public boolean loadReports() {
    return loadReports;
  }

  /**
   * Warm-up before each measured window: 3 s at time scale 1, scaled, at least 150 ms. Round
   * robin's queue at the slowest backend takes longer than that to reach its steady state (about
   * 10 s at time scale 1), so short windows show it a few percent above its 25%.
   */
  Duration warmUp() {
    return Duration.ofNanos(Math.max(150_000_000L, (long) (3e9 * timeScale)));
  }

  /** Base service times of backends 1..4 at time scale 1, in seconds. */
  static final double[] BASE_SERVICE_SECONDS = {0.050, 0.150, 0.300, 0.500};

  /** Service times at this time scale, in seconds. */
  public double[] serviceSeconds() {
    double[] s = new double[BASE_SERVICE_SECONDS.length];
    for (int i = 0; i < s.length; i++) {
      s[i] = BASE_SERVICE_SECONDS[i] * timeScale;
    }
    return s;
  }

  /** A time of the article's wall clock scaled to this lab run. */
  Duration scaled(Duration atScaleOne) {
    return Duration.ofNanos(Math.max(1_000_000L, (long) (atScaleOne.toNanos() * timeScale)));
  }

  /** The lab's usage text, printed with a bad command line and for {@code --help}. */
  public static String usage() {
    return LabCommandLine.usage();
  }

  /** Parses the arguments after {@code lab}. */
  public static LabOptions parse(String... args) {
    return LabCommandLine.parse(args);
  }

  /** A bad command line; the message (if any) says what, the caller prints {@link #usage()}. */
  public static final class UsageException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  /** Builds options in code (tests); every setter validates. */
  public static final class Builder {
    private List<Scenario> scenarios = Scenario.defaultRun();
    private List<String> strategies; // null: the client's default
    private boolean allStrategies;
    private List<LabClient.Kind> clientKinds = List.of(LabClient.Kind.OKHTTP);
    private Duration duration;
    private Double timeScale;
    private int workers = 8;
    private Integer users;
    private Integer clients;
    private boolean loadReports;
    private Path csv;
    private Path report;
    private int maxAttempts = 3;
    private HedgingPolicy hedging;
    private String hedge = "off";
    private LoadReportStyle reportStyle = LoadReportStyle.HONEST;
    private int runs = 1;
    private boolean coreCells;
    private List<String> onlyCells = List.of();

    /**
     * {@code --cells}: {@code full} (every cell of the reports scenario), {@code core} ({@link
     * ReportsLab#core}), or a comma-separated list of condition names ({@link
     * ReportsLab#CONDITION_NAMES}, e.g. {@code "none,honest tomcat-200"}): those conditions only, at
     * every client count and strategy, for probing one cell without the rest.
     */
    public Builder cells(String text) {
      switch (text) {
        case "full" -> {
          coreCells = false;
          onlyCells = List.of();
        }
        case "core" -> {
          coreCells = true;
          onlyCells = List.of();
        }
        default -> {
          List<String> names = new ArrayList<>();
          for (String part : text.split(",", -1)) {
            String name = part.trim();
            if (!ReportsLab.CONDITION_NAMES.contains(name)) {
              throw new UsageException("--cells: \"" + text + "\" (expected: full, core, or a comma-separated list of "
                  + String.join(", ", ReportsLab.CONDITION_NAMES) + ")");
            }
            if (!names.contains(name)) {
              names.add(name);
            }
          }
          coreCells = false;
          onlyCells = names;
        }
      }
      return this;
    }

    /** {@code --runs}: runs per cell of the {@code reports} scenario, 1 to 20. */
    public Builder runs(int n) {
      if (n < 1 || n > 20) {
        throw new UsageException("--runs: " + n + " (expected: 1..20)");
      }
      runs = n;
      return this;
    }

    public Builder scenarios(String list) {
      if (list.equals("all")) {
        scenarios = Scenario.defaultRun();
        return this;
      }
      Set<Scenario> chosen = new LinkedHashSet<>();
      for (String id : list.split(",")) {
        try {
          chosen.add(Scenario.of(id.trim()));
        } catch (IllegalArgumentException e) {
          throw new UsageException(e.getMessage());
        }
      }
      scenarios = new ArrayList<>(chosen);
      return this;
    }

    public Builder strategies(String list) {
      if (list.equals("all")) {
        strategies = null;
        allStrategies = true;
        return this;
      }
      Set<String> chosen = new LinkedHashSet<>();
      for (String name : list.split(",")) {
        String n = name.trim();
        if (!ALL_STRATEGIES.contains(n) && !SpringLabClient.SPRING_STRATEGIES.contains(n)) {
          throw new UsageException("--strategies: \"" + n + "\" (expected: all or a comma-separated list of "
              + String.join(", ", ALL_STRATEGIES) + "; with --client spring also "
              + String.join(", ", SpringLabClient.SPRING_STRATEGIES) + ")");
        }
        chosen.add(n);
      }
      strategies = new ArrayList<>(chosen);
      return this;
    }

    public Builder duration(Duration d) {
      if (d.compareTo(Duration.ofMillis(100)) < 0 || d.compareTo(Duration.ofHours(1)) > 0) {
        throw new UsageException("--duration: " + d.toMillis() + " ms (expected: 100ms..1h)");
      }
      duration = d;
      return this;
    }

    public Builder timeScale(double scale) {
      if (!(scale >= 0.01 && scale <= 10)) {
        throw new UsageException("--time-scale: " + scale + " (expected: 0.01..10)");
      }
      timeScale = scale;
      return this;
    }

    public Builder workers(int c) {
      if (c < 1 || c > 256) {
        throw new UsageException("--workers: " + c + " (expected: 1..256)");
      }
      workers = c;
      return this;
    }

    public Builder users(int n) {
      if (n < 1 || n > 2000) {
        throw new UsageException("--users: " + n + " (expected: 1..2000)");
      }
      users = n;
      return this;
    }

    public Builder clients(int k) {
      if (k < 1 || k > 500) {
        throw new UsageException("--clients: " + k + " (expected: 1..500)");
      }
      clients = k;
      return this;
    }

    public Builder loadReports(boolean on) {
      loadReports = on;
      return this;
    }

    public Builder csv(Path file) {
      csv = file;
      return this;
    }

    public Builder report(Path file) {
      report = file;
      return this;
    }

    public Builder maxAttempts(int attempts) {
      if (attempts < 1 || attempts > 10) {
        throw new UsageException("--max-attempts: " + attempts + " (expected: 1..10)");
      }
      maxAttempts = attempts;
      return this;
    }

    /** {@code p95}, {@code p99.9} (a percentile of recent latency), {@code 20ms} (a fixed delay) or {@code off}. */
    public Builder hedge(String text) {
      String t = text.trim().toLowerCase(Locale.ROOT);
      try {
        if (t.equals("off")) {
          hedging = null;
        } else if (t.startsWith("p")) {
          hedging = HedgingPolicy.percentile(Double.parseDouble(t.substring(1)));
        } else if (t.endsWith("ms")) {
          hedging = HedgingPolicy.fixedDelay(Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2))));
        } else {
          throw new NumberFormatException(t);
        }
      } catch (IllegalArgumentException e) { // NumberFormatException included
        throw new UsageException("--hedge: \"" + text + "\" (expected: p95, p99 (50..99.99), a delay like 20ms, or off)");
      }
      hedge = t;
      return this;
    }

    /** {@code --report-style}: see {@link LoadReportStyle#parse}. */
    public Builder reportStyle(String text) {
      try {
        reportStyle = LoadReportStyle.parse(text);
      } catch (IllegalArgumentException e) {
        throw new UsageException(e.getMessage());
      }
      return this;
    }

    public Builder client(LabClient.Kind kind) {
      clientKinds = List.of(kind);
      return this;
    }

    /**
     * {@code --client}: one kind, or a comma-separated list of okhttp, jdk and hc5 (each at most
     * once) whose every scenario x strategy runs through each in turn; spring runs alone (its
     * strategies are not Fairway's).
     */
    public Builder clientKinds(String list) {
      Set<LabClient.Kind> chosen = new LinkedHashSet<>();
      for (String id : list.split(",")) {
        if (!chosen.add(LabClient.Kind.of(id))) {
          throw new UsageException("--client: \"" + list + "\" (expected: each client at most once)");
        }
      }
      if (chosen.size() > 1 && chosen.contains(LabClient.Kind.SPRING)) {
        throw new UsageException("--client: \"" + list + "\" (expected: spring alone: its strategies are Spring Cloud"
            + " LoadBalancer's and the starter's; a list of okhttp, jdk and hc5)");
      }
      clientKinds = List.copyOf(chosen);
      return this;
    }

    /** Checks the options that depend on each other (the client and what it can run), then builds. */
    public LabOptions build() {
      LabClient.Kind client = clientKinds.get(0);
      if (strategies != null) {
        for (String n : strategies) {
          if (SpringLabClient.SPRING_STRATEGIES.contains(n) && client != LabClient.Kind.SPRING) {
            throw new UsageException("--strategies: \"" + n + "\" (expected: with --client spring only)");
          }
        }
      }
      if (client == LabClient.Kind.SPRING) {
        if (hedging != null) {
          throw new UsageException("--hedge: \"" + hedge + "\" (expected: off with --client spring: Spring Cloud "
              + "LoadBalancer does not hedge)");
        }
        if (scenarios.contains(Scenario.ZONES)) {
          throw new UsageException("--scenario: \"zones\" (expected: with --client okhttp only: its cross-zone "
              + "penalty is an OkHttp interceptor)");
        }
        if (scenarios.contains(Scenario.SUBSET)) {
          throw new UsageException("--scenario: \"subset\" (expected: with --client okhttp only: each of its clients"
              + " is a Fairway balancer under OkHttp)");
        }
      }
      for (LabClient.Kind kind : clientKinds) {
        if (kind == LabClient.Kind.JDK || kind == LabClient.Kind.HC5) {
          checkPlainClient(kind);
        }
      }
      if (clientKinds.size() > 1 && scenarios.contains(Scenario.REPORTS)) {
        throw new UsageException("--scenario: \"reports\" (expected: with one --client: its table has no client"
            + " column)");
      }
      return new LabOptions(this);
    }

    /**
     * What the JDK client and HttpClient 5 cannot run: the scenarios whose clients are OkHttp's own.
     * Both hedge as the OkHttp interceptor does (--hedge).
     */
    private void checkPlainClient(LabClient.Kind kind) {
      for (Scenario okHttpOnly : List.of(Scenario.ZONES, Scenario.SUBSET, Scenario.ROLLING, Scenario.KUBERNETES)) {
        if (scenarios.contains(okHttpOnly)) {
          throw new UsageException("--scenario: \"" + okHttpOnly.id() + "\" (expected: with --client okhttp only: "
              + (okHttpOnly == Scenario.ZONES ? "its cross-zone penalty is an OkHttp interceptor)"
                  : "its clients are OkHttp clients of its own)"));
        }
      }
    }
  }

  /** ", style capped,..." when honest backends do not word reports as the lab always did. */
  String styleNote() {
    return reportStyle == LoadReportStyle.HONEST ? "" : " (" + reportStyle + ")";
  }

  @Override
  public String toString() {
    return "scenarios " + Arrays.toString(scenarios.stream().map(Scenario::id).toArray()) + ", " + strategies.size()
        + " strategies, time scale " + timeScale + ", " + duration.toMillis() / 1000.0 + " s measured per run, "
        + workers + " workers per backend, max attempts " + maxAttempts
        + (clients != null ? ", " + clients + " clients" : "") + (loadReports ? ", load reports on" + styleNote() : "")
        + (hedging != null ? ", hedging " + hedge : "")
        + (clientKinds.size() > 1 ? ", clients " + String.join(",", clientKinds.stream().map(LabClient.Kind::id).toList())
            : client != LabClient.Kind.OKHTTP ? ", client " + client.id() : "");
  }
}
