package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.fast;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.consul.fake.Fault;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ConsulCloseTest {
  private final FakeConsul fake = FakeConsul.start();

  @AfterEach
  void stop() {
    fake.close();
  }

  @Test
  void close_duringABlockingQuery_returnsWithinOneSecond_andLeavesNoThread() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    ConsulTargetSource s = fast(fake, "orders", Duration.ofMinutes(5)).build();
    long tookMs;
    try {
      s.whenReady().get(5, TimeUnit.SECONDS);
      TestSupport.await(Duration.ofSeconds(2), "a blocking query in flight",
          () -> fake.requests("/v1/health/").stream().anyMatch(r -> r.target().contains("wait=5m") && r.status() == 0));
      TestSupport.sleep(100);
      assertThat(TestSupport.consulThreads()).extracting(Thread::getName)
          .as("a standalone source: its loop and one HTTP worker")
          .containsExactlyInAnyOrder("fairway-consul-orders", "fairway-consul-orders-http-0");
    } finally {
      long start = System.nanoTime();
      s.close();
      tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    assertThat(tookMs).isLessThan(1000);
    threadsEnd();
    assertThat(s.targets()).hasSize(1);
    System.out.printf("close() during a 5 min blocking query took %d ms%n", tookMs);
  }

  @Test
  void close_duringAStalledReply_andDuringBackoff_returnsWithinOneSecond() throws Exception {
    fake.fault(Fault.STALL);
    ConsulTargetSource stalled = fast(fake, "orders").build();
    long start;
    try {
      TestSupport.await(Duration.ofSeconds(3), "the stalled request", () -> !fake.requests("/v1/health/").isEmpty());
      TestSupport.sleep(100);
    } finally {
      start = System.nanoTime();
      stalled.close();
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(1000);

    fake.fault(Fault.NO_CLUSTER_LEADER_500);
    ConsulTargetSource backingOff = ConsulTargetSource.builder("orders").environment(java.util.Map.of()).consulUrl(fake.url())
        .backoff(Duration.ofSeconds(30), Duration.ofSeconds(60)).build();
    try {
      TestSupport.await(Duration.ofSeconds(3), "a failed request",
          () -> fake.requests("/v1/health/").stream().anyMatch(r -> r.status() == 500));
      TestSupport.sleep(100);
    } finally {
      start = System.nanoTime();
      backingOff.close();
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(1000);
    threadsEnd();
  }

  @Test
  void close_abortsTheRequestInFlight_theAgentSeesItsConnectionClosed() throws Exception {
    try (java.net.ServerSocket agent = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      agent.setSoTimeout(5000);
      ConsulTargetSource s = ConsulTargetSource.builder("orders").environment(java.util.Map.of())
          .consulUrl("http://127.0.0.1:" + agent.getLocalPort()).build();
      try (java.net.Socket conn = agent.accept()) {
        conn.setSoTimeout(3000);
        java.io.InputStream in = conn.getInputStream();
        byte[] buf = new byte[4096];
        int n = in.read(buf); // the request head; it is never answered
        assertThat(new String(buf, 0, n, java.nio.charset.StandardCharsets.US_ASCII))
            .startsWith("GET /v1/health/service/orders HTTP/1.1");

        long start = System.nanoTime();
        s.close();
        int eof;
        try {
          eof = in.read(buf);
        } catch (java.net.SocketException reset) {
          eof = -1; // a reset is a close too
        }
        assertThat(eof).as("the client closed the connection").isEqualTo(-1);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2000);
      }
    }
  }

  @Test
  void whenReady_failsWithCancellation_ifClosedBeforeTheFirstReply() {
    fake.stopAgent();
    ConsulTargetSource s = fast(fake, "orders").build();
    s.close();
    s.close(); // idempotent

    assertThatThrownBy(() -> s.whenReady().get(1, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(CancellationException.class);
    threadsEnd();
  }

  @Test
  void whenReady_copiesCannotCompleteTheSource() throws Exception {
    fake.stopAgent();
    try (ConsulTargetSource s = fast(fake, "orders").build()) {
      s.whenReady().complete(java.util.List.of());
      assertThat(s.whenReady()).isNotDone();
    }
  }

  /**
   * close() waited for its executors to terminate; a terminated pool's last worker may still be
   * alive for a moment on its way out of run(), so the threads get a bounded wait to be gone.
   */
  private static void threadsEnd() {
    TestSupport.await(Duration.ofSeconds(1), "every Consul thread to end", () -> TestSupport.consulThreads().isEmpty());
  }
}
