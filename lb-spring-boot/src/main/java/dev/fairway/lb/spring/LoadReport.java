package dev.fairway.lb.spring;

import dev.fairway.lb.LoadReportHeader;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.core.env.Environment;

/**
 * This server's load as ORCA's per-request report, the {@code endpoint-load-metrics} response header
 * in its TEXT form, as lb-okhttp's parser (and Envoy's) reads it: {@code TEXT
 * application_utilization=0.25, named_metrics.rif=1, named_metrics.workers=4}.
 *
 * <ul>
 *   <li>{@code named_metrics.rif}: requests in flight in this server (through the filter), the one
 *       being answered excluded, when its response is about to be committed;
 *   <li>{@code application_utilization}: that count over the worker count (to three decimals; above
 *       1 means a queue);
 *   <li>{@code named_metrics.workers}: the worker count: {@code fairway.server.load-reports.workers},
 *       else {@code server.tomcat.threads.max} or {@code server.jetty.threads.max}, else 200
 *       (Tomcat's default).
 * </ul>
 *
 * One counter per application; thread-safe.
 */
final class LoadReport {
  static final String HEADER = LoadReportHeader.NAME;
  static final int DEFAULT_WORKERS = 200;

  private final AtomicInteger inFlight = new AtomicInteger();
  private final int workers;

  LoadReport(int workers) {
    if (workers < 1) {
      throw new IllegalArgumentException("workers: " + workers + " (expected: at least 1)");
    }
    this.workers = workers;
  }

  /** The worker count: configured, else the servlet container's thread limit, else 200. */
  static LoadReport fromEnvironment(FairwayProperties.LoadReports properties, Environment environment) {
    Integer configured = properties.getWorkers();
    if (configured != null) {
      if (configured < 1) {
        String property = "fairway.server.load-reports.workers";
        throw new FairwayConfigurationException(property, property + ": " + configured + " (expected: at least 1)");
      }
      return new LoadReport(configured);
    }
    for (String property : new String[] {"server.tomcat.threads.max", "server.jetty.threads.max"}) {
      Integer threads = environment.getProperty(property, Integer.class);
      if (threads != null && threads > 0) {
        return new LoadReport(threads);
      }
    }
    return new LoadReport(DEFAULT_WORKERS);
  }

  void started() {
    inFlight.incrementAndGet();
  }

  void ended() {
    inFlight.decrementAndGet();
  }

  int inFlight() {
    return inFlight.get();
  }

  int workers() {
    return workers;
  }

  /** The header's value now, for a response of one of the requests in flight. */
  String header() {
    return header(inFlight.get() - 1, workers);
  }

  static String header(int othersInFlight, int workers) {
    int rif = Math.max(0, othersInFlight);
    double utilization = Math.round(1000.0 * rif / workers) / 1000.0;
    return "TEXT application_utilization=" + utilization + ", named_metrics.rif=" + rif + ", named_metrics.workers=" + workers;
  }
}
