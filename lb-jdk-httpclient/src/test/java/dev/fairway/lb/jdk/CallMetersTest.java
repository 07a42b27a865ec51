package dev.fairway.lb.jdk;

import static dev.fairway.lb.testing.Eventually.eventually;
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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * lb-core's call meters as {@link FairwayHttpClient} records them, read from a {@link
 * SimpleMeterRegistry} after real loopback calls: a success, a refused connect retried on another
 * target, a call the caller cancelled. The same names, tags and outcomes as lb-okhttp's.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CallMetersTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final HttpClient plain = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(2)).build();
  private final LoopbackServer server = new LoopbackServer();

  @AfterEach
  void stop() throws IOException {
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

  private static HttpRequest get(String path) {
    return HttpRequest.newBuilder(URI.create("http://orders" + path)).build();
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

  @Test
  void aSuccess_isTimedOnItsTarget_withOutcomeSuccess_andNothingElse() throws Exception {
    try (LoadBalancer lb = balancer(server.port())) {
      FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

      HttpResponse<String> response = client.send(get("/ok"), BodyHandlers.ofString());

      assertThat(response.body()).isEqualTo("ok");
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
      FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

      // Round robin: at least one of two calls picks the refused target first.
      assertThat(client.send(get("/ok"), BodyHandlers.ofString()).body()).isEqualTo("ok");
      assertThat(client.sendAsync(get("/ok"), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS).body())
          .isEqualTo("ok");

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
  void aCancelledCall_isTimedAsCancelled_notAFailure() throws Exception {
    try (LoadBalancer lb = balancer(server.port())) {
      FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb).build();

      CompletableFuture<HttpResponse<String>> call = client.sendAsync(get("/hang"), BodyHandlers.ofString());
      assertThat(server.hanging.await(10, TimeUnit.SECONDS)).as("the request arrived").isTrue();
      call.cancel(true);

      assertThatThrownBy(call::join).isInstanceOf(CancellationException.class);
      // The caller's future is cancelled at once; the attempt is settled (and timed) when the JDK's
      // own exchange has ended, on its executor, a moment later.
      eventually("the cancelled attempt was timed", () -> !requests().isEmpty() && inFlight(lb) == 0);
      assertThat(requests()).containsExactly(Map.entry("127.0.0.1:" + server.port() + " cancelled", 1L));
      assertThat(registry.find("fairway.retries").counters()).isEmpty();
      assertThat(inFlight(lb)).isZero();
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
