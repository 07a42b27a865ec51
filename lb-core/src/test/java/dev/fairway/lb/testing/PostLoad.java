package dev.fairway.lb.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Clients POSTing side by side in one run, for the "never worse than the plain client" proofs
 * against {@link Nginx}: every client gets the same number of threads, each sending one POST, then
 * pausing 0.7 to 1.5 s, until the deadline. nginx closes a connection idle for 1 s (or a little later:
 * its timers are lazy), so many POSTs go out on a pooled connection nginx is closing or has closed.
 *
 * <p>Each call carries a unique {@value FaultServer#CALL_HEADER} id ({@code <client>-<thread>-<n>}),
 * so {@link Nginx#served} can tell a call that arrived twice. Bounded: at most {@code seconds + 2}
 * calls per thread, and {@link #run} gives up waiting {@code seconds + 60} s after the start.
 */
public final class PostLoad {
  /** Sends one POST with the call id; returns normally only for the expected answer, else throws. */
  @FunctionalInterface
  public interface Post {
    void send(String callId) throws Exception;
  }

  /** A call that failed: its id and what it threw. */
  public record Failure(String callId, Throwable error) {
    @Override
    public String toString() {
      StringBuilder s = new StringBuilder(callId).append(": ").append(error);
      for (Throwable c = error.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
        s.append(" <- ").append(c);
      }
      return s.toString();
    }
  }

  /** One client's share of the load: its calls and its failures. */
  public static final class Client {
    private final String name;
    private final String idPrefix;
    private final Post post;
    private final AtomicInteger calls = new AtomicInteger();
    private final Queue<Failure> failures = new ConcurrentLinkedQueue<>();

    /** {@code idPrefix} starts every call id of this client, e.g. "plain" or "fairway". */
    public Client(String name, String idPrefix, Post post) {
      this.name = name;
      this.idPrefix = idPrefix;
      this.post = post;
    }

    public int calls() {
      return calls.get();
    }

    public List<Failure> failures() {
      return List.copyOf(failures);
    }

    private void run(int thread, long deadlineNanos, int maxCalls) {
      for (int n = 0; n < maxCalls && System.nanoTime() < deadlineNanos; n++) {
        calls.incrementAndGet();
        String callId = idPrefix + "-" + thread + "-" + n;
        try {
          post.send(callId);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          failures.add(new Failure(callId, e));
          return;
        } catch (Exception e) {
          failures.add(new Failure(callId, e));
        }
        try {
          Thread.sleep(ThreadLocalRandom.current().nextLong(700, 1_501)); // pacing, not a wait for a result
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }

    @Override
    public String toString() {
      List<Failure> all = failures();
      return name + " " + all.size() + " failures in " + calls + " calls"
          + (all.isEmpty() ? "" : " (e.g. " + all.subList(0, Math.min(3, all.size())) + ")");
    }
  }

  private PostLoad() {}

  /** Runs {@code threads} threads per client for {@code seconds}, all clients at once; returns when all are done. */
  public static void run(int threads, int seconds, List<Client> clients) throws InterruptedException {
    ExecutorService pool = Executors.newFixedThreadPool(threads * clients.size());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    List<Client> started = new ArrayList<>(clients);
    for (int t = 0; t < threads; t++) {
      int thread = t;
      for (Client client : started) {
        pool.execute(() -> client.run(thread, deadline, seconds + 2));
      }
    }
    pool.shutdown();
    if (!pool.awaitTermination(seconds + 60L, TimeUnit.SECONDS)) {
      pool.shutdownNow();
      throw new IllegalStateException("POST load still running " + (seconds + 60) + " s after its start");
    }
  }
}
