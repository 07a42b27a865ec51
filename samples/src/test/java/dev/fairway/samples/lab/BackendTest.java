package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The lab's backend on a real loopback socket: load reports, fast failure, slowdown. */
class BackendTest {
  private static final long SERVICE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  private final OkHttpClient client = new OkHttpClient.Builder().callTimeout(Duration.ofSeconds(10)).build();
  private Backend backend;

  @AfterEach
  void stop() {
    if (backend != null) {
      backend.close();
    }
    client.dispatcher().executorService().shutdownNow();
    client.connectionPool().evictAll();
  }

  private Response get() throws IOException {
    return client.newCall(new Request.Builder().url("http://127.0.0.1:" + backend.port() + "/work").build()).execute();
  }

  @Test
  void loadReport_isOrcaTextWithUtilizationInFlightAndWorkers() {
    assertThat(Backend.loadReport(5, 8))
        .isEqualTo("TEXT application_utilization=0.625, named_metrics.rif=5, named_metrics.workers=8");
    assertThat(Backend.loadReport(0, 8))
        .isEqualTo("TEXT application_utilization=0.0, named_metrics.rif=0, named_metrics.workers=8");
    // Past the workers (a queue): utilization above 1, as ORCA allows past a soft limit.
    assertThat(Backend.loadReport(20, 8))
        .isEqualTo("TEXT application_utilization=2.5, named_metrics.rif=20, named_metrics.workers=8");
    assertThat(Backend.loadReport(1, 3))
        .isEqualTo("TEXT application_utilization=0.333, named_metrics.rif=1, named_metrics.workers=3");
  }

  @Test
  void response_carriesTheLoadReportOnlyWhenAsked() throws IOException {
    backend = new Backend(1, SERVICE_NANOS, 8, true).start();
    try (Response r = get()) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.header(Backend.BACKEND_HEADER)).isEqualTo("1");
      // The only call: nothing else in flight once it is answered.
      assertThat(r.header("endpoint-load-metrics"))
          .isEqualTo("TEXT application_utilization=0.0, named_metrics.rif=0, named_metrics.workers=8");
    }
    backend.close();
    backend = new Backend(2, SERVICE_NANOS, 8).start();
    try (Response r = get()) {
      assertThat(r.code()).isEqualTo(200);
      assertThat(r.header("endpoint-load-metrics")).isNull();
    }
  }

  @Test
  void failFast_answers503AtOnceAndCountsTheRequest() throws IOException {
    backend = new Backend(2, TimeUnit.SECONDS.toNanos(5), 8, true).start();
    backend.failFast();
    long started = System.nanoTime();
    try (Response r = get()) {
      assertThat(r.code()).isEqualTo(503);
      assertThat(r.header(Backend.BACKEND_HEADER)).isEqualTo("2");
      assertThat(r.header("endpoint-load-metrics")).startsWith("TEXT application_utilization=");
      assertThat(r.body().string()).isEqualTo("unavailable\n");
    }
    // Far below the 5 s service time: the 503 does not wait for it.
    assertThat(System.nanoTime() - started).isLessThan(TimeUnit.SECONDS.toNanos(4));
    assertThat(backend.received()).isEqualTo(1);
    assertThat(backend.served()).isZero();
  }

  @Test
  void slowDown_multipliesTheServiceTimeOfLaterRequests() throws IOException {
    backend = new Backend(1, SERVICE_NANOS, 8).start();
    backend.slowDown(10);
    assertThat(backend.serviceNanos()).isEqualTo(10 * SERVICE_NANOS);
    long started = System.nanoTime();
    try (Response r = get()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(System.nanoTime() - started).isGreaterThanOrEqualTo(10 * SERVICE_NANOS);
    assertThat(backend.received()).isEqualTo(1);
    // The backend counts a request served after the response is written, so the client may read it
    // first: a bounded wait for the count.
    long deadline = System.nanoTime() + 2_000_000_000L;
    while (backend.served() == 0 && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(backend.served()).isEqualTo(1);
  }

  @Test
  void jitter_slowsTheSeededShareOfRequests_theSameOnesEveryRun() throws IOException {
    long service = TimeUnit.MILLISECONDS.toNanos(5);
    backend = new Backend(1, service, 8).start();
    backend.jitter(0.25, 20, 7);
    java.util.Random draws = new java.util.Random(7);
    java.util.List<Integer> expected = new java.util.ArrayList<>();
    java.util.List<Integer> slowed = new java.util.ArrayList<>();
    for (int i = 0; i < 24; i++) {
      if (draws.nextDouble() < 0.25) {
        expected.add(i);
      }
      long before = backend.jittered();
      long started = System.nanoTime();
      try (Response r = get()) {
        assertThat(r.code()).isEqualTo(200);
      }
      if (backend.jittered() > before) {
        slowed.add(i);
        // A slowed request cannot be faster than its sleep (the other way round a busy machine can be).
        assertThat(System.nanoTime() - started).as("request %d", i).isGreaterThanOrEqualTo(20 * service);
      }
    }
    assertThat(expected).isNotEmpty();
    assertThat(slowed).isEqualTo(expected);
    assertThat(backend.received()).isEqualTo(24); // counted before the response is written (served only after)
  }
}
