package dev.fairway.lb.hc5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.util.Timeout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * lb-core's call meters as {@link FairwayHttpClient5} records them, read from a {@link
 * SimpleMeterRegistry} after real loopback calls: a success, a refused connect retried on another
 * target, an exchange the caller aborted (classic) or cancelled (async). The same names, tags and
 * outcomes as lb-okhttp's.
 *
 * <p>The async cancel runs on a fresh connection; {@code AsyncClientTest} cancels one on a pooled
 * connection.
 */
@org.junit.jupiter.api.Timeout(30)
class CallMetersTest {
  private static final ConnectionConfig CONNECTIONS = ConnectionConfig.custom()
      .setConnectTimeout(Timeout.ofSeconds(1)).setSocketTimeout(Timeout.ofSeconds(25)).build();
  private static final RequestConfig REQUESTS = RequestConfig.custom().setResponseTimeout(Timeout.ofSeconds(25)).build();

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final LoopbackServer server = new LoopbackServer();
  private final List<AutoCloseable> opened = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
    server.close();
  }

  private LoadBalancer balancer(int... ports) {
    Target[] targets = new Target[ports.length];
    for (int i = 0; i < ports.length; i++) {
      targets[i] = Target.of("127.0.0.1", ports[i]);
    }
    return LoadBalancer.builder("orders").targets(targets).strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.disabled()).meterRegistry(registry).build();
  }

  private CloseableHttpClient classic(LoadBalancer lb) {
    CloseableHttpClient client = FairwayHttpClient5.builder().service("orders", lb).build()
        .customize(HttpClients.custom()
            .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
                .setDefaultConnectionConfig(CONNECTIONS).build())
            .setDefaultRequestConfig(REQUESTS))
        .build();
    opened.add(client);
    return client;
  }

  private CloseableHttpAsyncClient async(LoadBalancer lb) {
    CloseableHttpAsyncClient client = FairwayHttpClient5.builder().service("orders", lb).build()
        .customize(HttpAsyncClients.custom()
            .setConnectionManager(PoolingAsyncClientConnectionManagerBuilder.create()
                .setDefaultConnectionConfig(CONNECTIONS).build())
            .setDefaultRequestConfig(REQUESTS))
        .build();
    client.start();
    opened.add(client);
    return client;
  }

  private static String body(CloseableHttpClient client, String path) throws IOException {
    return client.execute(new HttpGet("http://orders" + path), response -> EntityUtils.toString(response.getEntity()));
  }

  /** Every {@code fairway.requests} series with a count: "target outcome" to count. */
  private Map<String, Long> requests() {
    Map<String, Long> counts = new TreeMap<>();
    for (Timer t : registry.find("fairway.requests").timers()) {
      if (t.count() > 0) {
        counts.put(t.getId().getTag("target") + " " + t.getId().getTag("outcome"), t.count());
      }
    }
    return counts;
  }

  private double retries(String reason) {
    Counter counter = registry.find("fairway.retries").tag("reason", reason).counter();
    return counter == null ? 0 : counter.count();
  }

  private static int inFlight(LoadBalancer lb) {
    return lb.status().stream().mapToInt(TargetStatus::inFlight).sum();
  }

  /**
   * Waits, at most 5 s, until {@code value} equals {@code expected}; returns the last value read.
   * Well inside the 25 s timeouts, so a pass is never a timeout's doing.
   */
  private static <T> T awaitValue(Supplier<T> value, T expected) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    T last = value.get();
    while (!last.equals(expected) && System.nanoTime() < deadline) {
      Thread.sleep(5);
      last = value.get();
    }
    return last;
  }

  @Test
  void aSuccess_isTimedOnItsTarget_withOutcomeSuccess_andNothingElse() throws Exception {
    try (LoadBalancer lb = balancer(server.port())) {
      assertThat(body(classic(lb), "/ok")).isEqualTo("ok");

      assertThat(requests()).containsExactly(Map.entry("127.0.0.1:" + server.port() + " success", 1L));
      assertThat(registry.find("fairway.retries").counters()).isEmpty();
      assertThat(registry.get("fairway.retry.budget.exhausted").counter().count()).isZero();
      assertThat(inFlight(lb)).isZero();
    }
    assertThat(registry.getMeters()).as("every meter goes with the balancer").isEmpty();
  }

  @Test
  void aRefusedConnect_isAFailureOnItsTarget_andOneRetryOnTheOther() throws Exception {
    int refused = LoopbackServer.refusedPort();
    try (LoadBalancer lb = balancer(refused, server.port())) {
      CloseableHttpClient client = classic(lb);

      // Round robin: at least one of two calls picks the refused target first.
      assertThat(body(client, "/ok")).isEqualTo("ok");
      assertThat(body(client, "/ok")).isEqualTo("ok");

      Map<String, Long> requests = requests();
      long refusals = requests.getOrDefault("127.0.0.1:" + refused + " failure", 0L);
      assertThat(refusals).isBetween(1L, 2L);
      assertThat(requests).containsOnlyKeys("127.0.0.1:" + refused + " failure", "127.0.0.1:" + server.port() + " success");
      assertThat(requests.get("127.0.0.1:" + server.port() + " success")).isEqualTo(2L);
      assertThat(retries("connect_failure")).as("one retry per refusal").isEqualTo((double) refusals);
      assertThat(registry.find("fairway.retries").counters()).hasSize(1);
      assertThat(server.requests()).isEqualTo(2);
      assertThat(inFlight(lb)).isZero();
    }
  }

  @Test
  void anAbortedExchange_isTimedAsCancelled_notAFailure() throws Exception {
    try (LoadBalancer lb = balancer(server.port())) {
      CloseableHttpClient client = classic(lb);
      HttpGet request = new HttpGet("http://orders/hang");
      CompletableFuture<String> call = CompletableFuture.supplyAsync(() -> {
        try {
          return client.execute(request, response -> EntityUtils.toString(response.getEntity()));
        } catch (IOException e) {
          return "failed: " + e.getClass().getSimpleName();
        }
      });
      assertThat(server.hanging.await(10, TimeUnit.SECONDS)).as("the request arrived").isTrue();
      request.cancel();

      assertThat(call.get(10, TimeUnit.SECONDS)).startsWith("failed: ");
      assertThat(requests()).containsExactly(Map.entry("127.0.0.1:" + server.port() + " cancelled", 1L));
      assertThat(registry.find("fairway.retries").counters()).isEmpty();
      assertThat(server.requests()).as("an abort is not retried").isEqualTo(1);
      assertThat(inFlight(lb)).isZero();
    }
  }

  @Test
  void aCancelledAsyncExchange_isTimedAsCancelled_notAFailure() throws Exception {
    try (LoadBalancer lb = balancer(server.port())) {
      CloseableHttpAsyncClient client = async(lb); // a fresh connection: see the class comment
      Future<SimpleHttpResponse> call = client.execute(SimpleRequestBuilder.get("http://orders/hang").build(), null);
      assertThat(server.hanging.await(10, TimeUnit.SECONDS)).as("the request arrived").isTrue();
      call.cancel(true);

      String cancelled = "127.0.0.1:" + server.port() + " cancelled";
      assertThat(awaitValue(() -> requests().getOrDefault(cancelled, 0L), 1L)).isEqualTo(1L);
      assertThat(requests()).containsOnly(Map.entry(cancelled, 1L));
      assertThat(awaitValue(() -> inFlight(lb), 0)).isZero();
      assertThat(registry.find("fairway.retries").counters()).isEmpty();
    }
  }

  /**
   * An HTTP/1.1 server on loopback (TCP_NODELAY on every accepted socket): {@code /ok} answers
   * 200 "ok", {@code /hang} never answers until the server closes. Bounded: it stops with the test.
   */
  static final class LoopbackServer implements AutoCloseable {
    final CountDownLatch hanging = new CountDownLatch(1);
    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger requests = new AtomicInteger();

    LoopbackServer() {
      try {
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      Thread acceptor = new Thread(this::accept, "loopback-server");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    static int refusedPort() throws IOException {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        return s.getLocalPort();
      }
    }

    int port() {
      return listener.getLocalPort();
    }

    int requests() {
      return requests.get();
    }

    private void accept() {
      while (!listener.isClosed()) {
        try {
          Socket socket = listener.accept();
          socket.setTcpNoDelay(true);
          sockets.add(socket);
          Thread t = new Thread(() -> serve(socket), "loopback-connection");
          t.setDaemon(true);
          t.start();
        } catch (IOException e) {
          return; // closed
        }
      }
    }

    private void serve(Socket socket) {
      try (socket) {
        BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
        OutputStream out = socket.getOutputStream();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          String path = line.split(" ")[1];
          for (String header = in.readLine(); header != null && !header.isEmpty(); header = in.readLine()) {
            // headers are not needed; GETs have no body
          }
          requests.incrementAndGet();
          if (path.startsWith("/hang")) {
            hanging.countDown();
            continue; // never answers; the next read ends when the client or the server closes
          }
          out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.ISO_8859_1));
          out.flush();
        }
      } catch (IOException | RuntimeException e) {
        // the peer went away
      }
    }

    @Override
    public void close() throws IOException {
      listener.close();
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
