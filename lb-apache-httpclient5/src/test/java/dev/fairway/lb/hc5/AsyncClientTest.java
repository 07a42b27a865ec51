package dev.fairway.lb.hc5;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.testing.Closer;
import dev.fairway.lb.testing.FaultServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hc.client5.http.async.methods.SimpleHttpRequest;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClientBuilder;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManager;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The async client ({@link FairwayHttpClient5#customize(HttpAsyncClientBuilder)}) on loopback servers. */
@org.junit.jupiter.api.Timeout(30)
class AsyncClientTest {
  private final Closer closer = new Closer();

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
  }

  private CloseableHttpAsyncClient client(FairwayHttpClient5 fairway) {
    HttpAsyncClientBuilder builder = HttpAsyncClients.custom()
        .setConnectionManager(PoolingAsyncClientConnectionManagerBuilder.create()
            .setDefaultConnectionConfig(ConnectionConfig.custom()
                .setConnectTimeout(Timeout.ofSeconds(1)).setSocketTimeout(Timeout.ofSeconds(10)).build())
            .build())
        .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(Timeout.ofSeconds(10)).build());
    CloseableHttpAsyncClient client =
        fairway.customize(builder, new DefaultHttpRequestRetryStrategy(1, TimeValue.ofMilliseconds(10))).build();
    client.start();
    return closer.add(client);
  }

  private LoadBalancer balancer(PassiveHealth health, int... ports) {
    List<Target> targets = new ArrayList<>();
    for (int port : ports) {
      targets.add(Target.of("127.0.0.1", port));
    }
    return closer.add(LoadBalancer.builder("orders").targets(targets.toArray(new Target[0]))
        .strategy(Strategy.roundRobin()).passiveHealth(health).build());
  }

  private static SimpleHttpRequest get(String url, String id) {
    return SimpleRequestBuilder.get(url).addHeader(FaultServer.CALL_HEADER, id).build();
  }

  private static SimpleHttpRequest post(String id) {
    return SimpleRequestBuilder.post("http://orders/work").addHeader(FaultServer.CALL_HEADER, id)
        .setBody("amount=5", ContentType.TEXT_PLAIN).build();
  }

  private static SimpleHttpResponse await(Future<SimpleHttpResponse> future) throws Exception {
    return future.get(10, TimeUnit.SECONDS);
  }

  @Test
  void gets_areBalanced_andOtherHostsPassThrough() throws Exception {
    FaultServer a = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    FaultServer b = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = balancer(PassiveHealth.defaults(), a.port(), b.port());
    CloseableHttpAsyncClient client = client(FairwayHttpClient5.builder().service("orders", lb).build());

    for (int i = 0; i < 4; i++) {
      SimpleHttpResponse response = await(client.execute(get("http://orders/work", "call-" + i), null));
      assertThat(response.getCode()).isEqualTo(200);
      assertThat(response.getBodyText()).isEqualTo("ok");
    }
    assertThat(await(client.execute(get("http://127.0.0.1:" + a.port() + "/work", "direct"), null)).getCode())
        .isEqualTo(200);

    assertThat(a.receivedTotal()).isEqualTo(3);
    assertThat(b.receivedTotal()).isEqualTo(2);
    eventually("no slot held", () -> Clients.inFlight(lb) == 0);
  }

  @Test
  void aRefusedTarget_isRetriedOnAnother_evenForAPost() throws Exception {
    FaultServer healthy = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = balancer(PassiveHealth.disabled(), FaultServer.refusedPort(), healthy.port());
    CloseableHttpAsyncClient client = client(FairwayHttpClient5.builder().service("orders", lb).build());

    for (int i = 0; i < 4; i++) {
      assertThat(await(client.execute(post("post-" + i), null)).getCode()).isEqualTo(200);
      assertThat(healthy.received("post-" + i)).isEqualTo(1);
    }
    eventually("no slot held", () -> Clients.inFlight(lb) == 0);
  }

  @Test
  void a503_getIsRetriedOnAnUntriedTarget_postIsNot_andHttpClientDoesNotRetryEither() throws Exception {
    FaultServer unavailable = closer.add(FaultServer.start(FaultServer.Behaviour.UNAVAILABLE));
    FaultServer healthy = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = balancer(PassiveHealth.disabled(), unavailable.port(), healthy.port());
    CloseableHttpAsyncClient client = client(FairwayHttpClient5.builder().service("orders", lb).build());

    List<Integer> gets = new ArrayList<>();
    List<Integer> posts = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      gets.add(await(client.execute(get("http://orders/work", "get-" + i), null)).getCode());
      posts.add(await(client.execute(post("post-" + i), null)).getCode());
    }

    assertThat(gets).containsOnly(200);
    assertThat(posts).contains(503);
    for (int i = 0; i < 4; i++) {
      assertThat(unavailable.received("get-" + i)).isLessThanOrEqualTo(1);
      assertThat(healthy.received("get-" + i)).isEqualTo(1);
      assertThat(unavailable.received("post-" + i) + healthy.received("post-" + i)).isEqualTo(1);
    }
    eventually("no slot held", () -> Clients.inFlight(lb) == 0);
  }

  @Test
  void aResetAfterTheSend_getMovesToAnotherTarget_postIsNeverSentTwice() throws Exception {
    FaultServer reset = closer.add(FaultServer.start(FaultServer.Behaviour.RESET_BEFORE_RESPONSE));
    FaultServer healthy = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = balancer(PassiveHealth.disabled(), reset.port(), healthy.port());
    CloseableHttpAsyncClient client = client(FairwayHttpClient5.builder().service("orders", lb).build());

    for (int i = 0; i < 4; i++) {
      assertThat(await(client.execute(get("http://orders/work", "get-" + i), null)).getCode()).isEqualTo(200);
    }
    int postFailures = 0;
    for (int i = 0; i < 4; i++) {
      try {
        assertThat(await(client.execute(post("post-" + i), null)).getCode()).isEqualTo(200);
      } catch (ExecutionException e) {
        postFailures++;
        assertThat(reset.received("post-" + i)).as("a failed POST reached the reset target").isEqualTo(1);
      }
    }

    assertThat(reset.receivedWithPrefix("get-")).as("GETs at the reset target").isPositive();
    assertThat(reset.receivedWithPrefix("post-")).as("POSTs at the reset target").isPositive();
    for (int i = 0; i < 4; i++) {
      assertThat(healthy.received("get-" + i)).isEqualTo(1);
      assertThat(reset.received("post-" + i) + healthy.received("post-" + i)).as("post-%d sent once", i).isEqualTo(1);
    }
    assertThat(postFailures).isEqualTo(reset.receivedWithPrefix("post-"));
    eventually("no slot held", () -> Clients.inFlight(lb) == 0);
  }

  @Test
  void aCancelledFuture_releasesThePick_andChargesNoTarget() throws Exception {
    FaultServer silent = closer.add(FaultServer.start(FaultServer.Behaviour.HEADERS_NEVER_COME));
    LoadBalancer lb = balancer(PassiveHealth.defaults().withConsecutiveFailures(1), silent.port());
    CloseableHttpAsyncClient client = client(FairwayHttpClient5.builder().service("orders", lb).build());

    Future<SimpleHttpResponse> future = client.execute(get("http://orders/work", "cancelled"), null);
    eventually("the request arrived", () -> silent.received("cancelled") == 1);
    assertThat(Clients.inFlight(lb)).isEqualTo(1);
    future.cancel(true);

    eventually("the slot is freed", () -> Clients.inFlight(lb) == 0);
    assertThat(lb.status()).allSatisfy(s -> assertThat(s.state()).isEqualTo(TargetState.HEALTHY));
    assertThat(silent.receivedTotal()).isEqualTo(1);
  }

  /**
   * On a connection the pool already had, HttpClient 5 sets the finished lease as the exchange's
   * cancel after the exchange itself ({@link AttemptCancellation}): a cancel used to end nothing, and
   * the slot stayed held until the socket timeout (20 s here, beyond this test's 5 s wait).
   */
  @Test
  void aCancelledFuture_onAPooledConnection_endsTheExchange_andReleasesThePickAtOnce() throws Exception {
    OneConnectionServer server = closer.add(new OneConnectionServer());
    LoadBalancer lb = balancer(PassiveHealth.defaults().withConsecutiveFailures(1), server.port());
    PoolingAsyncClientConnectionManager pool = PoolingAsyncClientConnectionManagerBuilder.create()
        .setDefaultConnectionConfig(ConnectionConfig.custom()
            .setConnectTimeout(Timeout.ofSeconds(1)).setSocketTimeout(Timeout.ofSeconds(20)).build())
        .build();
    CloseableHttpAsyncClient client = closer.add(FairwayHttpClient5.builder().service("orders", lb).build().customize(
        HttpAsyncClients.custom()
            .setConnectionManager(pool)
            .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(Timeout.ofSeconds(20)).build()))
        .build());
    client.start();

    assertThat(await(client.execute(get("http://orders/work", "answered"), null)).getCode()).isEqualTo(200);
    // The future completes when the consumer has the body, a moment before the exchange ends and its
    // connection goes back to the pool: sent earlier, the second request would open a new connection.
    eventually("the first connection is back in the pool", () -> pool.getTotalStats().getAvailable() == 1);
    Future<SimpleHttpResponse> future = client.execute(get("http://orders/work", "cancelled"), null);
    eventually("the second request arrived on the first connection", () -> server.requests() == 2);
    assertThat(Clients.inFlight(lb)).isEqualTo(1);
    future.cancel(true);

    eventually("the slot is freed", () -> Clients.inFlight(lb) == 0);
    eventually("the connection is closed", server::closedByClient);
    assertThat(lb.status()).allSatisfy(s -> assertThat(s.state()).isEqualTo(TargetState.HEALTHY));
    assertThat(server.connections()).isEqualTo(1);
  }

  /**
   * Accepts connections on loopback and answers only the first request it reads with a keep-alive
   * 200, so a second one waits on a pooled connection; counts requests and connections, and notes an
   * end of stream from the client.
   */
  private static final class OneConnectionServer implements AutoCloseable {
    private final ServerSocket socket;
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicBoolean closedByClient = new AtomicBoolean();
    private final Thread acceptor;

    OneConnectionServer() throws IOException {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      acceptor = new Thread(this::serve, "one-connection-server");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    int requests() {
      return requests.get();
    }

    int connections() {
      return connections.get();
    }

    boolean closedByClient() {
      return closedByClient.get();
    }

    private void serve() {
      while (!socket.isClosed()) {
        try (Socket s = socket.accept()) {
          connections.incrementAndGet();
          s.setTcpNoDelay(true);
          s.setSoTimeout(30_000);
          BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
          OutputStream out = s.getOutputStream();
          while (readHead(in)) {
            if (requests.incrementAndGet() == 1) {
              out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.ISO_8859_1));
              out.flush();
            }
          }
          closedByClient.set(true);
        } catch (IOException e) {
          if (!socket.isClosed()) {
            closedByClient.set(true); // a reset from the client ends the connection too
          }
        }
      }
    }

    /** Reads one request head; false at the end of the stream. */
    private static boolean readHead(BufferedReader in) throws IOException {
      String line = in.readLine();
      if (line == null) {
        return false;
      }
      while (line != null && !line.isEmpty()) {
        line = in.readLine();
      }
      return line != null;
    }

    @Override
    public void close() throws IOException, InterruptedException {
      socket.close();
      acceptor.join(5_000);
    }
  }

  @Test
  void noTarget_failsTheFuture() throws Exception {
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", 1)).build());
    lb.close();
    CloseableHttpAsyncClient client = client(FairwayHttpClient5.builder().service("orders", lb).build());

    assertThatThrownBy(() -> await(client.execute(get("http://orders/work", "none"), null)))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(dev.fairway.lb.NoTargetAvailableException.class);
  }
}
