/*
 * Get.java: a GET by one of the JDK's two HTTP clients, for the tests of
 * cordon run: java Get client|url URL.  Prints the status and the body;
 * on a failure, "java: " and the exception, and exits 1.  Neither client
 * is told of a proxy: the JVM takes it from JAVA_TOOL_OPTIONS.
 */
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

public class Get {
	public static void main(String[] args) {
		try {
			System.out.print(args[0].equals("client") ?
			    client(args[1]) : url(args[1]));
		} catch (Exception e) {
			System.out.println("java: " + e);
			System.exit(1);
		}
	}

	static String client(String target) throws Exception {
		HttpResponse<String> r = HttpClient.newHttpClient().send(
		    HttpRequest.newBuilder(URI.create(target)).build(),
		    HttpResponse.BodyHandlers.ofString());
		return r.statusCode() + " " + r.body();
	}

	static String url(String target) throws Exception {
		HttpURLConnection c =
		    (HttpURLConnection)new URL(target).openConnection();
		int status = c.getResponseCode();
		InputStream in = status < 400 ? c.getInputStream() :
		    c.getErrorStream();
		return status + " " +
		    new String(in.readAllBytes(), StandardCharsets.UTF_8);
	}
}
