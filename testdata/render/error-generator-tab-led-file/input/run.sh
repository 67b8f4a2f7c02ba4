	echo hi
