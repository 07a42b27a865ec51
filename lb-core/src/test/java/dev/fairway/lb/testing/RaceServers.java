package dev.fairway.lb.testing;

import dev.fairway.lb.Target;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Loopback HTTP/1.1 servers (TCP_NODELAY, keep-alive) that answer by a script over the order in
 * which requests reach <em>any</em> of them, as a hedge race needs: "the first request to arrive is
 * held, every later one answers". A held request is answered never; its server reads the
 * connection until the client closes it, and counts that close ({@link #closedByClient}): proof
 * that the client stopped the exchange. Shared by the JDK and HttpClient 5 adapters' hedging tests.
 */
public final class RaceServers implements AutoCloseable {
  /** What a server does with one request. */
  public interface Script {
    /** The reply to the {@code arrival}-th request (0 first) of all servers, which reached server {@code server}. */
    Reply reply(int arrival, int server) throws InterruptedException;
  }

  /** A reply: a status and body, or none at all (held until the client closes the connection). */
  public record Reply(int status, String body) {
    public static final Reply HOLD = new Reply(0, "");
    /** No answer: the connection is reset (SO_LINGER 0), an I/O error on the client. */
    public static final Reply RESET = new Reply(-1, "");

    public static Reply ok(String body) {
      return new Reply(200, body);
    }
  }

  private final List<ServerSocket> listeners = new ArrayList<>();
  private final Script script;
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "race-server");
    t.setDaemon(true);
    return t;
  });
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger arrivals = new AtomicInteger();
  /** "server:path" of every request, in arrival order. */
  public final List<String> arrived = new CopyOnWriteArrayList<>();
  /** The head (request line and headers, as sent) of every request, in arrival order. */
  public final List<String> heads = new CopyOnWriteArrayList<>();
  private final AtomicIntegerArray requests;
  private final AtomicIntegerArray connections;
  private final AtomicIntegerArray closedByClient;
  private final List<CountDownLatch> arrivalLatches = new ArrayList<>();
  private volatile boolean closed;

  private RaceServers(int n, Script script) throws IOException {
    this.script = script;
    this.requests = new AtomicIntegerArray(n);
    this.connections = new AtomicIntegerArray(n);
    this.closedByClient = new AtomicIntegerArray(n);
    for (int i = 0; i < 8; i++) {
      arrivalLatches.add(new CountDownLatch(1));
    }
    for (int i = 0; i < n; i++) {
      listeners.add(NoDelayServerSocketFactory.INSTANCE.createServerSocket(0, 50, InetAddress.getLoopbackAddress()));
    }
  }

  public static RaceServers start(int n, Script script) throws IOException {
    RaceServers servers = new RaceServers(n, script);
    for (int i = 0; i < n; i++) {
      int server = i;
      servers.pool.execute(() -> servers.acceptLoop(server));
    }
    return servers;
  }

  public Target target(int server) {
    return Target.of("127.0.0.1", port(server));
  }

  public Target[] targets() {
    Target[] targets = new Target[listeners.size()];
    for (int i = 0; i < targets.length; i++) {
      targets[i] = target(i);
    }
    return targets;
  }

  public int port(int server) {
    return listeners.get(server).getLocalPort();
  }

  /** The server that {@code port} is. */
  public int server(int port) {
    for (int i = 0; i < listeners.size(); i++) {
      if (port(i) == port) {
        return i;
      }
    }
    throw new IllegalArgumentException("no server on port " + port);
  }

  public int requests(int server) {
    return requests.get(server);
  }

  public int totalRequests() {
    return arrivals.get();
  }

  public int connections(int server) {
    return connections.get(server);
  }

  /** Connections with a held request that the client closed. */
  public int closedByClient(int server) {
    return closedByClient.get(server);
  }

  /** Waits (at most 5 s) until the {@code arrival}-th request (0 first) reached a server. */
  public boolean awaitArrival(int arrival) throws InterruptedException {
    return arrivalLatches.get(arrival).await(5, TimeUnit.SECONDS);
  }

  /** The server the {@code arrival}-th request reached. */
  public int serverOf(int arrival) {
    return Integer.parseInt(arrived.get(arrival).substring(0, arrived.get(arrival).indexOf(':')));
  }

  private void acceptLoop(int server) {
    ServerSocket listener = listeners.get(server);
    while (!closed) {
      try {
        Socket socket = listener.accept();
        connections.incrementAndGet(server);
        open.add(socket);
        pool.execute(() -> serve(server, socket));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(int server, Socket socket) {
    try (socket) {
      InputStream in = socket.getInputStream();
      OutputStream out = socket.getOutputStream();
      for (;;) {
        String head = readHead(in);
        if (head == null) {
          return;
        }
        int length = contentLength(head);
        in.readNBytes(length);
        String path = head.substring(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
        int arrival = arrivals.getAndIncrement();
        requests.incrementAndGet(server);
        heads.add(head);
        arrived.add(server + ":" + path);
        if (arrival < arrivalLatches.size()) {
          arrivalLatches.get(arrival).countDown();
        }
        Reply reply = script.reply(arrival, server);
        if (reply.status() == 0) { // held: wait for the client to give up on the connection
          while (in.read() >= 0) {
            // a client sends nothing more on a connection whose request is unanswered
          }
          closedByClient.incrementAndGet(server);
          return;
        }
        if (reply.status() < 0) {
          socket.setSoLinger(true, 0);
          return; // closed by the try: a reset
        }
        byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 " + reply.status() + " X\r\nContent-Length: " + body.length + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
      }
    } catch (IOException e) {
      if (!closed) {
        closedByClient.incrementAndGet(server); // a reset while held counts as the client's close too
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      open.remove(socket);
    }
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    for (;;) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
      matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3)) ? matched + 1 : 0;
      if (matched == 4) {
        return head.toString(StandardCharsets.US_ASCII);
      }
    }
  }

  private static int contentLength(String head) {
    for (String line : head.split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        return Integer.parseInt(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    return 0;
  }

  @Override
  public void close() throws IOException {
    closed = true;
    for (ServerSocket listener : listeners) {
      listener.close();
    }
    for (Socket socket : open) {
      socket.close();
    }
    pool.shutdownNow();
  }
}
