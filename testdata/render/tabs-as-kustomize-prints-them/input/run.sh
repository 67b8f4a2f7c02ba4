	echo hi
	echo there
