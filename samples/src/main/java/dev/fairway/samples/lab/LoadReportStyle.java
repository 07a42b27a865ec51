package dev.fairway.samples.lab;

import java.util.Locale;

/**
 * How a lab backend words its ORCA load report ({@value Backend#LOAD_REPORT_HEADER}, TEXT form).
 * Honest servers differ in three ways, and a bound on what a report may claim must not cost the
 * gain from any of them ({@code --report-style}):
 *
 * <ul>
 *   <li>utilization <b>uncapped</b> (ORCA's {@code application_utilization}, which may exceed 1 past
 *       the soft limit: queued requests count) or <b>capped</b> at 1, as a CPU figure is;
 *   <li>{@code named_metrics.rif} <b>excluding</b> the request being answered (it is about to leave)
 *       or <b>including</b> it (the count at the moment the server writes the header);
 *   <li>{@code named_metrics.workers} <b>present</b> or <b>absent</b> (a name only this lab sends; gRPC's
 *       ORCA has no such field).
 * </ul>
 *
 * <p>And one dishonest server: {@link #LIAR} always claims to be idle, {@value #LIAR_REPORT},
 * whatever its load (the {@code liar} scenario's backend-4). A report of 1 request in flight at a
 * utilization of 0.000001 implies a million workers.
 *
 * <p>Immutable and thread-safe.
 */
final class LoadReportStyle {
  /** What {@link #LIAR} sends on every response. */
  static final String LIAR_REPORT = "TEXT application_utilization=0.000001, named_metrics.rif=1";

  /** What {@link #LIAR_ZERO} sends on every response. */
  static final String LIAR_ZERO_REPORT = "TEXT application_utilization=0, named_metrics.rif=0";
  /** The thread count {@link #TOMCAT} measures utilization against: Tomcat's default. */
  static final int TOMCAT_THREADS = 200;

  /** The lab's report until styles existed: uncapped, the answered request excluded, workers sent. */
  static final LoadReportStyle HONEST = new LoadReportStyle(false, false, true, 0, null, "honest");
  static final LoadReportStyle LIAR = new LoadReportStyle(false, false, false, 0, LIAR_REPORT, "liar");
  /** A liar that claims nothing at all in flight: {@value #LIAR_ZERO_REPORT}. */
  static final LoadReportStyle LIAR_ZERO = new LoadReportStyle(false, false, false, 0, LIAR_ZERO_REPORT, "liar-rif0");
  /**
   * The starter's filter on Tomcat with its default 200 threads in front of a backend whose real
   * limit is its 8 workers: honest by its own measure (the answered request excluded, utilization =
   * rif / 200, {@code workers=200}), so it claims free workers while calls queue.
   */
  static final LoadReportStyle TOMCAT = new LoadReportStyle(false, false, true, TOMCAT_THREADS, null, "tomcat-200");

  private final boolean capped;
  private final boolean countsAnswered;
  private final boolean sendsWorkers;
  /** The worker count the report measures against, if not the backend's own (0). */
  private final int claimedWorkers;
  /** What it sends on every response whatever its load; null for an honest report. */
  private final String fixed;
  private final String name;

  private LoadReportStyle(boolean capped, boolean countsAnswered, boolean sendsWorkers, int claimedWorkers,
      String fixed, String name) {
    this.capped = capped;
    this.countsAnswered = countsAnswered;
    this.sendsWorkers = sendsWorkers;
    this.claimedWorkers = claimedWorkers;
    this.fixed = fixed;
    this.name = name;
  }

  /**
   * A backend whose reports froze at an idle moment: what {@code honest} says with one request (the
   * answered one) at a backend of {@code workers} workers, on every response, whatever its load.
   */
  static LoadReportStyle frozen(LoadReportStyle honest, int workers) {
    return new LoadReportStyle(false, false, false, 0, honest.report(1, workers), "frozen");
  }

  /**
   * How backend {@code index} (0-based) of a {@code scenario} run reports: the liar's lie for the
   * {@link Scenario#LIAR} backend, else the options' style with {@code --load-reports}, else null
   * (no reports).
   */
  static LoadReportStyle of(LabOptions options, Scenario scenario, int index) {
    if (scenario == Scenario.LIAR && index == Scenario.LIAR_BACKEND) {
      return LIAR;
    }
    if (options.liar != null && index == Scenario.LIAR_BACKEND) {
      return options.liar;
    }
    return options.loadReports() ? options.reportStyle : null;
  }

  /**
   * Parses {@code --report-style}: a comma-separated list of {@code uncapped|capped},
   * {@code rif-excludes-answered|rif-counts-answered} and {@code workers|no-workers}, each at most
   * once; what is not named stays as in {@link #HONEST}. Or {@code tomcat-200} alone: {@link #TOMCAT}.
   */
  static LoadReportStyle parse(String text) {
    if (text.trim().equals(TOMCAT.toString())) {
      return TOMCAT;
    }
    Boolean capped = null;
    Boolean countsAnswered = null;
    Boolean sendsWorkers = null;
    for (String part : text.split(",", -1)) {
      String p = part.trim().toLowerCase(Locale.ROOT);
      switch (p) {
        case "uncapped", "capped" -> capped = once(capped, p.equals("capped"), text);
        case "rif-excludes-answered", "rif-counts-answered" ->
            countsAnswered = once(countsAnswered, p.equals("rif-counts-answered"), text);
        case "workers", "no-workers" -> sendsWorkers = once(sendsWorkers, p.equals("workers"), text);
        default -> throw invalid(text);
      }
    }
    LoadReportStyle style = new LoadReportStyle(capped != null && capped, countsAnswered != null && countsAnswered,
        sendsWorkers == null || sendsWorkers, 0, null, "");
    return new LoadReportStyle(style.capped, style.countsAnswered, style.sendsWorkers, 0, null, style.toString());
  }

  private static boolean once(Boolean previous, boolean value, String text) {
    if (previous != null) {
      throw invalid(text);
    }
    return value;
  }

  private static IllegalArgumentException invalid(String text) {
    return new IllegalArgumentException("--report-style: \"" + text + "\" (expected: a comma-separated list of"
        + " uncapped|capped, rif-excludes-answered|rif-counts-answered, workers|no-workers, each at most once;"
        + " or tomcat-200 alone)");
  }

  /**
   * The header value at a backend with {@code load} requests queued or in service, the one being
   * answered included, and {@code backendWorkers} workers.
   */
  String report(int load, int backendWorkers) {
    if (fixed != null) {
      return fixed;
    }
    int workers = claimedWorkers > 0 ? claimedWorkers : backendWorkers;
    int rif = Math.max(0, countsAnswered ? load : load - 1);
    double permille = 1000.0 * rif / workers;
    double utilization = Math.round(capped ? Math.min(1000.0, permille) : permille) / 1000.0;
    return "TEXT application_utilization=" + utilization + ", named_metrics.rif=" + rif
        + (sendsWorkers ? ", named_metrics.workers=" + workers : "");
  }

  boolean lies() {
    return fixed != null;
  }

  /** A short name for tables: "liar", "liar-rif0", "frozen", "tomcat-200", or the style as {@code --report-style} names it. */
  String label() {
    return name;
  }

  /** As {@code --report-style} names it, e.g. {@code capped,rif-counts-answered,no-workers}; "liar" for the liar. */
  @Override
  public String toString() {
    if (fixed != null || claimedWorkers > 0) {
      return name;
    }
    return (capped ? "capped" : "uncapped") + (countsAnswered ? ",rif-counts-answered" : ",rif-excludes-answered")
        + (sendsWorkers ? ",workers" : ",no-workers");
  }
}
