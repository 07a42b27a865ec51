package dev.fairway.samples.lab;

import java.util.Locale;

/**
 * The lab's load shapes, after the reference article's three scenarios plus the two that show the
 * limit at low load ({@link #LIGHT}) and a backend coming back ({@link #RECOVERY}), and three that
 * model a fleet of callers, each with its own balancer ({@link #FLEET}, {@link #SLOWDOWN},
 * {@link #FASTFAIL}).
 */
public enum Scenario {
  /** 20 closed-loop users: fewer than the 32 workers, so the limit is the 20 fastest workers. */
  LIGHT(20, 1, "20 users"),
  /** 100 users: every worker can be busy; the article's steady load. */
  STEADY(100, 1, "100 users"),
  /** 10 users ramping to 250 and back to 10 (30% up, 40% hold, 30% down). */
  BURST(250, 1, "10 -> 250 -> 10 users"),
  /** 100 users; backend-1 is killed at one third of the measured window and stays dead. */
  FAILURE(100, 1, "100 users, backend-1 killed at 1/3"),
  /** As {@link #FAILURE}, and backend-1 comes back on the same port at two thirds. */
  RECOVERY(100, 1, "100 users, backend-1 killed at 1/3, back at 2/3"),
  /**
   * 100 users over 50 independent clients (two users each): every balancer sees only its own one or
   * two calls in flight, as each instance of a real service does.
   */
  FLEET(100, 50, "100 users over 50 clients"),
  /**
   * 100 users over 10 clients; from one third of the window on, backend-1 takes {@value
   * #SLOWDOWN_FACTOR}x its service time and stays slow: a gray failure that no health check sees.
   */
  SLOWDOWN(100, 10, "100 users over 10 clients, backend-1 10x slower from 1/3"),
  /**
   * 100 users over 10 clients; from one third of the window on, backend-2 answers every request
   * with 503 at once: the "black hole" that attracts strategies that prefer the least loaded target.
   */
  FASTFAIL(100, 10, "100 users over 10 clients, backend-2 answers 503 at once from 1/3"),
  /**
   * Zone-aware routing: backends 1 and 2 in zone "a", the caller's ({@code localZone("a")}), 3 and 4
   * in zone "b", all four with the same service time ({@link #ZONE_SERVICE}); the caller waits
   * {@link #CROSS_ZONE_PENALTY} more for every call to zone b (a network interceptor on the client
   * side, so it costs the caller's time and not the backend's workers, as a cross-zone hop does).
   * 12 users, fewer than zone a's 16 workers: capacity to spare. Backend-1 is killed at one third
   * and stays dead: zone a has lost half its capacity. Not in the default run ({@code --scenario
   * zones}): it is about one feature, and the default run stays near four minutes.
   */
  ZONES(12, 1, "12 users in zone a; backends 1,2 in a, 3,4 in b (+25 ms); backend-1 killed at 1/3"),
  /**
   * 100 users, as {@link #STEADY}; on every backend {@value #JITTER_PERCENT}% of requests take
   * {@value #JITTER_FACTOR}x their service time, as a GC pause or a noisy neighbour does, decided by
   * each backend with seeded randomness. The tail that hedging ({@code --hedge}) is for. Not in the
   * default run: name it ({@code --scenario jitter}).
   */
  JITTER(100, 1, "100 users, 1% of requests on every backend take 20x"),
  /**
   * 100 users, as {@link #STEADY}; backend-4, the slowest, always reports an idle state ({@link
   * LoadReportStyle#LIAR}), whether or not the others report ({@code --load-reports}): one
   * misconfigured or compromised instance. Compare with {@code steady --load-reports}, the same run
   * with every backend honest. Not in the default run: name it ({@code --scenario liar}).
   */
  LIAR(100, 1, "100 users, backend-4 always reports idle (utilization 0.000001, rif 1)"),
  /**
   * A rolling deploy with graceful drain ({@link RollingRun}): 20 users send GET and POST; each backend
   * in turn leaves discovery, keeps serving for a drain period, stops, starts a second later and
   * rejoins. One row per drain, longer and shorter than discovery's propagation delay. Not in the
   * default run: name it ({@code --scenario rolling}).
   */
  ROLLING(RollingRun.USERS, 1, "20 users, GET and POST; backends drained, stopped and restarted in turn"),
  /**
   * Kubernetes discovery ({@link KubernetesLab}): the rolling restart of {@link #ROLLING} driven through
   * EndpointSlice conditions by a fake API server (terminating, then gone, then a new ready Pod), and a
   * zone-hints run (the share of calls kept on the hints' allocation for the caller's zone). Not in the
   * default run: name it ({@code --scenario kubernetes}).
   */
  KUBERNETES(RollingRun.USERS, 1, "20 users, GET and POST; Pods terminate, go and return via EndpointSlices; zone hints"),
  /**
   * Deterministic subsetting on real sockets ({@link SubsetSocketLab}): 40 clients, each its own balancer
   * at {@code PeerCoordinate.fixed(i, 40)} with one user, over 20 backends that count the connections
   * they accept; a window of 5 beside every client on every backend, in one invocation. Not in the
   * default run: name it ({@code --scenario subset}).
   */
  SUBSET(SubsetSocketLab.CLIENTS, SubsetSocketLab.CLIENTS, "40 clients x 20 backends, window 5 vs every backend; connections accepted"),
  /**
   * Load reports must never hurt ({@link ReportsLab}): 100 users as {@link #STEADY}, for each
   * strategy at 1 and 50 clients: no reports, honest reports in each style, and backend-4 lying
   * (rif 1 at utilization 0.000001; rif 0 at utilization 0) or frozen at an idle report while the
   * others report honestly. One table. Not in the default run: name it ({@code --scenario reports}).
   */
  REPORTS(100, 1, "100 users; strategies x report styles x liars x {1, 50} clients");

  /** The backend (0-based) that lies about its load in {@link #LIAR}: the slowest. */
  static final int LIAR_BACKEND = 3;

  /** Service time of every backend in {@link #ZONES}, at time scale 1. */
  static final java.time.Duration ZONE_SERVICE = java.time.Duration.ofMillis(100);
  /** What a call to zone b costs the caller on top, in {@link #ZONES}, at time scale 1. */
  static final java.time.Duration CROSS_ZONE_PENALTY = java.time.Duration.ofMillis(25);
  /** Backends (0-based) in zone "a", the caller's, in {@link #ZONES}; the others are in "b". */
  static final int ZONE_A_BACKENDS = 2;

  /** The share of requests, in percent, that {@link #JITTER} makes slow on every backend. */
  static final int JITTER_PERCENT = 1;
  /** How much slower those requests are. */
  static final int JITTER_FACTOR = 20;
  /** Backend i draws from {@code new Random(JITTER_SEED + i)}: the same requests are slow in every run. */
  static final long JITTER_SEED = 16;

  /** How much slower backend-1 gets in {@link #SLOWDOWN}. */
  static final int SLOWDOWN_FACTOR = 10;
  /** The backend (0-based) that slows down in {@link #SLOWDOWN}. */
  static final int SLOW_BACKEND = 0;
  /** The backend (0-based) that answers 503 in {@link #FASTFAIL}. */
  static final int FAILING_BACKEND = 1;
  /** Fastfail's grace: calls reaching the failing backend are counted from this long (time scale 1) after the fault. */
  static final java.time.Duration FASTFAIL_GRACE = java.time.Duration.ofSeconds(1);

  /** Burst starts and ends here; it is also the warm-up load of burst. */
  static final int BURST_BASE_USERS = 10;

  private final int defaultUsers;
  private final int defaultClients;
  private final String shape;

  Scenario(int defaultUsers, int defaultClients, String shape) {
    this.defaultUsers = defaultUsers;
    this.defaultClients = defaultClients;
    this.shape = shape;
  }

  /** The name used on the command line and in the CSV. */
  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** N, or for {@link #BURST} the peak. */
  public int defaultUsers() {
    return defaultUsers;
  }

  /** K: independent clients (each its own balancer and OkHttp client) the users are spread over. */
  public int defaultClients() {
    return defaultClients;
  }

  String shape() {
    return shape;
  }

  boolean killsBackend() {
    return this == FAILURE || this == RECOVERY || this == ZONES;
  }


  /**
   * Whether {@code lab} with no {@code --scenario} (or {@code --scenario all}) runs it: all but
   * {@link #ZONES}, {@link #JITTER}, {@link #LIAR}, {@link #ROLLING} and {@link #SUBSET}, which are about one feature
   * each and run only when named, so
   * the default run stays near four minutes.
   */
  boolean inDefaultRun() {
    return this != JITTER && this != ZONES && this != LIAR && this != ROLLING && this != SUBSET && this != KUBERNETES && this != REPORTS;
  }

  /** Whether it has runs and a table of its own ({@link RollingLab}, {@link SubsetSocketLab}), not scenario x strategy rows. */
  boolean runsApart() {
    return this == ROLLING || this == SUBSET || this == KUBERNETES || this == REPORTS;
  }

  /** The scenarios of the default run, in order. */
  static java.util.List<Scenario> defaultRun() {
    return java.util.Arrays.stream(values()).filter(Scenario::inDefaultRun).toList();
  }

  /** The mean service time under {@link #JITTER} as a multiple of the base one (1.19), else 1. */
  double meanServiceFactor() {
    return this == JITTER ? 1 + JITTER_PERCENT / 100.0 * (JITTER_FACTOR - 1) : 1;
  }

  /** Whether something happens to a backend during the window (kill, slowdown, fast failure). */
  boolean hasFault() {
    return killsBackend() || this == SLOWDOWN || this == FASTFAIL;
  }

  /** A fresh script of what this scenario does to its backends during one run. */
  FaultScript faultScript() {
    switch (this) {
      case FAILURE:
      case RECOVERY:
      case ZONES:
        return FaultScript.killBackendOne(this);
      case SLOWDOWN:
        return FaultScript.slowDown(this, SLOW_BACKEND, SLOWDOWN_FACTOR);
      case FASTFAIL:
        return FaultScript.failFast(this, FAILING_BACKEND, FASTFAIL_GRACE);
      case JITTER:
        return FaultScript.jitter(JITTER_PERCENT, JITTER_FACTOR, JITTER_SEED);
      default:
        return FaultScript.none();
    }
  }

  /** Whether backend-1 is slowed down ({@link #SLOWDOWN}) at {@code fraction} of the window. */
  boolean slowAt(double fraction) {
    return this == SLOWDOWN && fraction >= 1.0 / 3;
  }

  /** Whether backend-2 answers 503 at once ({@link #FASTFAIL}) at {@code fraction} of the window. */
  boolean fastFailingAt(double fraction) {
    return this == FASTFAIL && fraction >= 1.0 / 3;
  }

  /** Users active at {@code fraction} (0..1) of the measured window, with {@code users} as N or peak. */
  int usersAt(double fraction, int users) {
    if (this != BURST) {
      return users;
    }
    int base = Math.min(BURST_BASE_USERS, users);
    double f = Math.max(0, Math.min(1, fraction));
    double n;
    if (f < 0.3) {
      n = base + (users - base) * f / 0.3;
    } else if (f < 0.7) {
      n = users;
    } else {
      n = users - (users - base) * (f - 0.7) / 0.3;
    }
    return (int) Math.round(n);
  }

  /** Users during warm-up. */
  int warmUpUsers(int users) {
    return this == BURST ? Math.min(BURST_BASE_USERS, users) : users;
  }

  /** Whether backend-1 is up at {@code fraction} of the measured window. */
  boolean backendOneUp(double fraction) {
    switch (this) {
      case FAILURE:
      case ZONES:
        return fraction < 1.0 / 3;
      case RECOVERY:
        return fraction < 1.0 / 3 || fraction >= 2.0 / 3;
      default:
        return true;
    }
  }

  /** The scenario whose {@link #id()} is {@code id}. */
  public static Scenario of(String id) {
    for (Scenario s : values()) {
      if (s.id().equals(id)) {
        return s;
      }
    }
    throw new IllegalArgumentException("scenario: \"" + id + "\" (expected: light, steady, burst, failure, recovery, fleet, slowdown, fastfail, zones, jitter, liar, rolling, subset, kubernetes, reports or all)");
  }
}
