package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.OutcomeRule;
import dev.fairway.lb.testing.Closer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.MockResponse;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The interceptor hands every response's load report to its pick (expiry: lb-core's LoadReportTest). */
class LoadReportHookTest {
  private final Closer closer = new Closer();
  /** What the one backend answers: status and report header (null for none). */
  private final AtomicReference<Object[]> answer = new AtomicReference<>(new Object[] {200, null});
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private Backends backends;
  private LoadBalancer lb;
  private OkHttpClient client;

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
  }

  private void start(int maxAttempts) throws Exception {
    backends = closer.add(Backends.start(1, i -> request -> {
      Object[] a = answer.get();
      MockResponse.Builder r = new MockResponse.Builder().code((Integer) a[0]).body("x");
      for (int k = 1; k < a.length; k++) {
        if (a[k] != null) {
          r.addHeader(LoadReportHeader.NAME, (String) a[k]);
        }
      }
      return r.build();
    }));
    lb = closer.add(LoadBalancer.builder("orders").targets(backends.targets()).strategy(Strategy.leastQueueing())
        .passiveHealth(PassiveHealth.disabled()).meterRegistry(registry).build());
    client = backends.client(LoadBalancingInterceptor.builder().service("orders", lb).maxAttempts(maxAttempts).build());
  }

  private int get() throws Exception {
    try (Response r = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      r.body().string();
      return r.code();
    }
  }

  private TargetStatus status() {
    return lb.status().get(0);
  }

  private double reports(String result) {
    var counter = registry.find("fairway.load.reports").tag("service", "orders").tag("result", result).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void reportOnA200_reachesTheTargetsLoadMetric() throws Exception {
    start(3);
    answer.set(new Object[] {200, "TEXT application_utilization=0.625, named_metrics.rif=5, named_metrics.workers=8"});
    assertThat(get()).isEqualTo(200);
    assertThat(status().reportedUtilization()).isEqualTo(0.625);
    assertThat(status().reportedInFlight()).isEqualTo(5.0);
    assertThat(reports("parsed")).isEqualTo(1.0);
    assertThat(reports("malformed")).isZero();
  }

  /**
   * A response with the header twice: the first value is the report, as through the JDK's client and
   * HttpClient 5 ({@code firstValue}, {@code getFirstHeader}). Before, OkHttp's {@code
   * Response.header} gave the last one.
   */
  @Test
  void aRepeatedReportHeader_readsItsFirstValue() throws Exception {
    start(3);
    answer.set(new Object[] {200, "TEXT application_utilization=0.25, named_metrics.rif=2",
        "TEXT application_utilization=0.75, named_metrics.rif=6"});
    assertThat(get()).isEqualTo(200);
    assertThat(status().reportedUtilization()).isEqualTo(0.25);
    assertThat(status().reportedInFlight()).isEqualTo(2.0);
  }

  @Test
  void reportOnA503_reachesItToo() throws Exception {
    start(1);
    answer.set(new Object[] {503, "TEXT application_utilization=1.5, named_metrics.rif=12"});
    assertThat(get()).isEqualTo(503);
    assertThat(status().reportedUtilization()).isEqualTo(1.5);
    assertThat(status().reportedInFlight()).isEqualTo(12.0);
  }

  @Test
  void malformedReport_isIgnoredAndCounted_andTheLastGoodOneStays() throws Exception {
    start(3);
    answer.set(new Object[] {200, "TEXT application_utilization=0.25, named_metrics.rif=2"});
    assertThat(get()).isEqualTo(200);
    for (String bad : new String[] {"JSON {\"rif\": 3}", "TEXT named_metrics.rif=-1", "TEXT rif", ""}) {
      answer.set(new Object[] {200, bad});
      assertThat(get()).isEqualTo(200);
    }
    assertThat(status().reportedUtilization()).isEqualTo(0.25);
    assertThat(status().reportedInFlight()).isEqualTo(2.0);
    assertThat(reports("malformed")).isEqualTo(4.0);
    assertThat(reports("parsed")).isEqualTo(1.0);
  }

  @Test
  void responseWithoutAReport_changesNothingAndCountsNothing() throws Exception {
    start(3);
    assertThat(get()).isEqualTo(200);
    assertThat(status().reportedUtilization()).isNaN();
    assertThat(registry.find("fairway.load.reports").counters()).isEmpty();
  }

  @Test
  void readingTheReport_allocatesNothingBeyondTheHeaderString() throws Exception {
    start(1);
    // The hook alone, on the thread that would run it: a parse into the thread's report and the
    // pick's store. A real response costs OkHttp's header string, which is not counted here.
    var pick = lb.pick();
    Attempt attempt = new Attempt(pick, client.newCall(new Request.Builder().url("http://orders/x").build()),
        new ServiceRoute("orders", lb, new AttemptBudget(0.2, 10, System::nanoTime), CallMetrics.NOOP, null,
            OutcomeRule.defaultFailureStatusCodes()));
    String header = "TEXT application_utilization=0.625, named_metrics.rif=5, named_metrics.workers=8";
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    for (int i = 0; i < 20_000; i++) {
      attempt.responded(200, header);
    }
    long thread = Thread.currentThread().getId();
    long before = threads.getThreadAllocatedBytes(thread);
    for (int i = 0; i < 100_000; i++) {
      attempt.responded(200, header);
    }
    long allocated = threads.getThreadAllocatedBytes(thread) - before;
    assertThat(allocated).as("bytes allocated by 100,000 reports").isLessThan(16_384);
    attempt.complete(null);
    assertThat(status().reportedInFlight()).isEqualTo(5.0);
  }
}
