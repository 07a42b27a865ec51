package dev.fairway.lb.hc5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.testing.FaultServer;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A POST on a pooled connection the server closed while it was idle (nginx's {@code
 * keepalive_timeout}, before HttpClient's own check after 2 s of inactivity): through Fairway it
 * goes out on another connection when the idle one was idle for {@link
 * IdleConnectionCheck#CHECK_AFTER_IDLE_NANOS} (time injected), and it is never written twice. The
 * server answers each connection's first request, then closes it, as nginx closes an idle one.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class IdleConnectionCheckTest {

  @Test
  void post_onAConnectionTheServerClosedWhileIdle_goesOutOnANewConnection_once() throws Exception {
    AtomicLong now = new AtomicLong(1_000_000_000L);
    try (OneRequestServer server = OneRequestServer.start();
        LoadBalancer lb = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", server.port())).build();
        CloseableHttpClient client = FairwayHttpClient5.builder().service("orders", lb).ticker(now::get).build()
            .customize(Clients.builder(2_000, 5, 2_000)).build()) {
      assertThat(post(client, "call-1")).isEqualTo("ok");
      server.awaitClosed(); // the pooled connection is now closed by the server: FIN sent
      now.addAndGet(IdleConnectionCheck.CHECK_AFTER_IDLE_NANOS);

      assertThat(post(client, "call-2")).isEqualTo("ok");

      assertThat(server.calls).containsExactly("call-1", "call-2"); // each once, call-2 on a second connection
      assertThat(server.connections()).isEqualTo(2);
      assertThat(lb.status().get(0).inFlight()).isZero();
    }
  }

  @Test
  void post_onAConnectionIdleLessThanTheCheckWaits_failsAsThePlainClientFails_andIsNotResent() throws Exception {
    AtomicLong now = new AtomicLong(1_000_000_000L);
    try (OneRequestServer server = OneRequestServer.start();
        LoadBalancer lb = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", server.port())).build();
        CloseableHttpClient client = FairwayHttpClient5.builder().service("orders", lb).ticker(now::get).build()
            .customize(Clients.builder(2_000, 5, 2_000)).build()) {
      assertThat(post(client, "call-1")).isEqualTo("ok");
      server.awaitClosed();
      now.addAndGet(IdleConnectionCheck.CHECK_AFTER_IDLE_NANOS - 1);

      assertThatThrownBy(() -> post(client, "call-2"))
          .isInstanceOf(IOException.class)
          .matches(NginxStaleConnectionTest::closedUnderTheClient, "closed under the client");

      assertThat(server.calls).containsExactly("call-1");
      assertThat(server.connections()).isEqualTo(1);
      assertThat(lb.status().get(0).inFlight()).isZero();
    }
  }

  private static String post(CloseableHttpClient client, String callId) throws IOException {
    HttpPost post = new HttpPost("http://orders/orders");
    post.setHeader(FaultServer.CALL_HEADER, callId);
    post.setEntity(new StringEntity("{\"item\":\"" + callId + "\"}", ContentType.APPLICATION_JSON));
    return client.execute(post, response -> EntityUtils.toString(response.getEntity()));
  }

  /**
   * Loopback, TCP_NODELAY: answers the first request of each connection {@code 200 "ok"} (keep-alive,
   * as far as the client can tell), then closes the connection; counts the call ids it read whole.
   */
  private static final class OneRequestServer implements AutoCloseable {
    final List<String> calls = new CopyOnWriteArrayList<>();
    private final ServerSocket listener;
    private final BlockingQueue<Socket> closed = new LinkedBlockingQueue<>();
    private final Thread acceptor;
    private volatile int accepted;

    private OneRequestServer() throws IOException {
      this.listener = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
      this.acceptor = new Thread(this::serve, "one-request-server");
      acceptor.setDaemon(true);
    }

    static OneRequestServer start() throws IOException {
      OneRequestServer server = new OneRequestServer();
      server.acceptor.start();
      return server;
    }

    int port() {
      return listener.getLocalPort();
    }

    int connections() {
      return accepted;
    }

    /** Waits until the server has closed a connection after its answer. */
    void awaitClosed() throws InterruptedException {
      assertThat(closed.poll(10, TimeUnit.SECONDS)).as("the server closed the connection").isNotNull();
    }

    private void serve() {
      while (!listener.isClosed()) {
        Socket socket;
        try {
          socket = listener.accept();
        } catch (IOException e) {
          return; // closed
        }
        accepted++;
        try {
          socket.setTcpNoDelay(true);
          socket.setSoTimeout(5_000);
          InputStream in = new BufferedInputStream(socket.getInputStream());
          String id = readRequest(in);
          if (id != null) {
            calls.add(id);
            OutputStream out = socket.getOutputStream();
            out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
          }
        } catch (IOException e) {
          // a client that went away: closed below all the same
        } finally {
          closeQuietly(socket);
          closed.add(socket); // after close(): its FIN is on its way to the client
        }
      }
    }

    private static void closeQuietly(Socket socket) {
      try {
        socket.close();
      } catch (IOException e) {
        // nothing left to do with it
      }
    }

    /** One request read whole; its call id ("" if none), or null if the stream ended first. */
    private static String readRequest(InputStream in) throws IOException {
      if (readLine(in) == null) { // the request line
        return null;
      }
      String id = "";
      long length = 0;
      for (String line = readLine(in); line != null && !line.isEmpty(); line = readLine(in)) {
        int colon = line.indexOf(':');
        if (colon <= 0) {
          continue;
        }
        String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
        String value = line.substring(colon + 1).trim();
        if (name.equals(FaultServer.CALL_HEADER.toLowerCase(Locale.ROOT))) {
          id = value;
        } else if (name.equals("content-length")) {
          length = Long.parseLong(value);
        }
      }
      if (in.readNBytes((int) length).length < length) {
        return null;
      }
      return id;
    }

    private static String readLine(InputStream in) throws IOException {
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      for (int b = in.read(); b >= 0; b = in.read()) {
        if (b == '\n') {
          String s = line.toString(StandardCharsets.ISO_8859_1);
          return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
        }
        line.write(b);
      }
      return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
      listener.close();
    }
  }
}
